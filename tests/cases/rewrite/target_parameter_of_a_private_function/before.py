import tensorflow as tf


@tf.RegisterGradient("ClipParam")
def _clip(op, grad):
    return tf.clip_by_value(grad, -0.5, 0.5)


@tf.RegisterGradient("ScaleParam")
def _scale(op, grad):
    return grad * 3.0


def _bounded(x, gradient="ClipParam"):
    # every call of this module-private helper passes a literal, or nothing (the default)
    with tf.get_default_graph().gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def _clipped_only(x, gradient="ClipParam"):
    with tf.get_default_graph().gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def model(x, z):
    return (_bounded(x) + _bounded(z, "ScaleParam") * 2.0 + _bounded(x * z, gradient="ClipParam")
            + _clipped_only(z))
