import tensorflow as tf
from tensorflow.python.framework import ops


def binarize_weights(w):
    """BinaryNet / DoReFa: clip, scale by the mean magnitude, sign with a straight-through gradient."""
    with ops.name_scope("Binarized"):
        @tf.custom_gradient
        def _sign_straight_through(x):
            def grad_fn(dy):
                return dy
            return tf.sign(x), grad_fn
        w = tf.clip_by_value(w, -1.0, 1.0)
        scale = tf.stop_gradient(tf.reduce_mean(tf.abs(w)))
        return _sign_straight_through(w / scale) * scale


def entry(x):
    return binarize_weights(x)
