import tensorflow as tf


def _clip(forward, name=None):
    @tf.custom_gradient
    def wrapped(x):
        def grad_fn(grad):
            return tf.clip_by_value(grad, -1.0, 1.0)
        return forward(x, name=name), grad_fn
    return wrapped


def named_by_variable(x, scope):
    return _clip(tf.identity, name=scope)(x)  # the name is read here, when the op is made


def _halve(forward, name=None):
    @tf.custom_gradient
    def wrapped(x):
        def grad_fn(grad):
            return grad * 0.5
        return forward(x, name=name), grad_fn
    return wrapped


def first(x):
    return _halve(tf.identity, name="first")(x)


def second(x):
    return _halve(tf.identity)(x)


def model(x, z):
    return named_by_variable(x * 3.0, "scaled") + first(z) * second(x)
