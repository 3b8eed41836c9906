import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("HalfGradShared")
def _grad(op, grad):
    return 0.5 * grad


@tf.RegisterGradient("NegGradShared")
def _grad(op, grad):
    return -grad


SCALE_GRADIENT = _grad  # reads the name: renaming either function would break it


def halved(x):
    with tf_grl_migrate.gradient_override_map({"Identity": "HalfGradShared"}):
        return tf.identity(x)
