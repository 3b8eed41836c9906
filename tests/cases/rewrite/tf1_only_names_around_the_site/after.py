"""The function holding the override also uses TF1 names TF2 lacks: once migrated it runs under
TF2, so they take their tf.compat.v1 spelling (the very objects TF1 had)."""
import tensorflow as tf


@tf.custom_gradient
def _scale_quarter(x):
    def grad_fn(grad):
        return [0.25 * grad]
    return tf.identity(x), grad_fn


def scaled_features(x):
    with tf.compat.v1.variable_scope("features"):
        h = tf.tanh(x)
        y = _scale_quarter(h)
        return tf.compat.v1.log(1.0 + y * y)
