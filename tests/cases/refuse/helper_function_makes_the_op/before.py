import tensorflow as tf


def quantize(x):
    return tf.round(x * 4.0) / 4.0


def twice_quantized(x):
    # the helper's own Round ops are overridden by TF1 too, and they live in another function
    with tf.get_default_graph().gradient_override_map({"Round": "Identity"}):
        return tf.round(quantize(x))
