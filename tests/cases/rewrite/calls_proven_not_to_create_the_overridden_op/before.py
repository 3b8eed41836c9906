import tensorflow as tf
from tensorflow.python.framework import ops


def binarize_weights(w):
    """BinaryNet / DoReFa: clip, scale by the mean magnitude, sign with a straight-through gradient."""
    g = tf.get_default_graph()
    with ops.name_scope("Binarized"):
        with g.gradient_override_map({"Sign": "Identity"}):
            w = tf.clip_by_value(w, -1.0, 1.0)
            scale = tf.stop_gradient(tf.reduce_mean(tf.abs(w)))
            return tf.sign(w / scale) * scale


def entry(x):
    return binarize_weights(x)
