import tensorflow as tf


def quantize(x):
    # a helper with an override block of its own, called from another block
    @tf.custom_gradient
    def _round_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.round(x), grad_fn
    return _round_straight_through(x * 4.0) / 4.0


def binary_weights(x):
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.sign(x), grad_fn
    return _sign_straight_through(quantize(x) - 0.1)
