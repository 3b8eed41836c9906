"""The function holding the override also uses TF1 names TF2 lacks: once migrated it runs under
TF2, so they take their tf.compat.v1 spelling (the very objects TF1 had)."""
import tensorflow as tf


@tf.RegisterGradient("ScaleAroundSite")
def _scale_quarter(op, grad):
    return [0.25 * grad]


def scaled_features(x):
    with tf.variable_scope("features"):
        h = tf.tanh(x)
        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": "ScaleAroundSite"}):
            y = tf.identity(h)
        return tf.log(1.0 + y * y)
