import tensorflow as tf


def to_levels(x, bits):
    # written for TF <= 0.11, whose round was floor(x + 0.5): today it makes a Round op, not Floor
    levels = 2 ** bits - 1
    with tf.get_default_graph().gradient_override_map({"Floor": "Identity"}):
        return tf.round(x * levels) / levels


def binary_weights(x):
    with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
        return tf.sign(to_levels(x, 2) - 0.5)
