import tensorflow as tf


def quantize(x, levels=4):
    """DoReFa-style k-bit quantisation with a straight-through round."""
    with tf.get_default_graph().gradient_override_map({"Round": "Identity"}):
        return tf.round(x * levels) / levels
