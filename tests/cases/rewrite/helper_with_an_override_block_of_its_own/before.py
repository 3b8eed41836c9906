import tensorflow as tf


def quantize(x):
    # a helper with an override block of its own, called from another block
    g = tf.get_default_graph()
    with g.gradient_override_map({"Round": "Identity"}):
        return tf.round(x * 4.0) / 4.0


def binary_weights(x):
    with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
        return tf.sign(quantize(x) - 0.1)
