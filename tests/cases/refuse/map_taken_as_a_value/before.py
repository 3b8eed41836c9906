import tensorflow as tf


def binarize(x):
    g = tf.get_default_graph()
    enter = g.gradient_override_map
    with enter({"Sign": "Identity"}):
        return tf.sign(x)


def binarize_getattr(x):
    g = tf.get_default_graph()
    with getattr(g, "gradient_override_map")({"Sign": "Identity"}):
        return tf.sign(x)
