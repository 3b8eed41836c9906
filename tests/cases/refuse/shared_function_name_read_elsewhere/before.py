import tensorflow as tf


@tf.RegisterGradient("HalfGradShared")
def _grad(op, grad):
    return 0.5 * grad


@tf.RegisterGradient("NegGradShared")
def _grad(op, grad):
    return -grad


SCALE_GRADIENT = _grad  # reads the name: renaming either function would break it


def halved(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "HalfGradShared"}):
        return tf.identity(x)
