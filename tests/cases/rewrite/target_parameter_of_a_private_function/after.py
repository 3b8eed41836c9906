import tensorflow as tf


def _clip(forward):
    @tf.custom_gradient
    def wrapped(x):
        def grad_fn(grad):
            return tf.clip_by_value(grad, -0.5, 0.5)
        return forward(x), grad_fn
    return wrapped


def _scale(forward):
    @tf.custom_gradient
    def wrapped(x):
        def grad_fn(grad):
            return grad * 3.0
        return forward(x), grad_fn
    return wrapped


def _bounded(x, gradient="ClipParam"):
    # every call of this module-private helper passes a literal, or nothing (the default)
    return {"ClipParam": _clip, "ScaleParam": _scale}[gradient](tf.identity)(x)


def _clipped_only(x, gradient="ClipParam"):
    return _clip(tf.identity)(x)


def model(x, z):
    return (_bounded(x) + _bounded(z, "ScaleParam") * 2.0 + _bounded(x * z, gradient="ClipParam")
            + _clipped_only(z))
