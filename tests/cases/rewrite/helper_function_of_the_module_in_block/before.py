import tensorflow as tf


def hard_sigmoid(x):
    return tf.clip_by_value((x + 1.0) / 2.0, 0.0, 1.0)


def binary_tanh_unit(x):
    # BinaryNet's binary tanh: round a hard sigmoid, straight-through gradient
    with tf.get_default_graph().gradient_override_map({"Round": "Identity"}):
        return 2.0 * tf.round(hard_sigmoid(x)) - 1.0
