import tensorflow as tf
import tf_grl_migrate


def quantize(x):
    return tf.round(x * 4.0) / 4.0


def twice_quantized(x):
    # the helper's own Round ops are overridden by TF1 too, and they live in another function
    with tf_grl_migrate.gradient_override_map({"Round": "Identity"}):
        return tf.round(quantize(x))
