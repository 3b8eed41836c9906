import tensorflow as tf


def to_levels(x, bits):
    # written for TF <= 0.11, whose round was floor(x + 0.5): today it makes a Round op, not Floor
    levels = 2 ** bits - 1
    return tf.round(x * levels) / levels


def binary_weights(x):
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.sign(x), grad_fn
    return _sign_straight_through(to_levels(x, 2) - 0.5)
