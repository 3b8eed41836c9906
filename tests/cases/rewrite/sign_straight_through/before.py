import tensorflow as tf


def binarize(x):
    """BinaryNet: sign forward, straight-through gradient."""
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": "Identity"}):
        return tf.sign(x)
