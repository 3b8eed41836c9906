import tensorflow as tf


def hard_sigmoid(x):
    return tf.clip_by_value((x + 1.0) / 2.0, 0.0, 1.0)


def binary_tanh_unit(x):
    # BinaryNet's binary tanh: round a hard sigmoid, straight-through gradient
    @tf.custom_gradient
    def _round_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.round(x), grad_fn
    return 2.0 * _round_straight_through(hard_sigmoid(x)) - 1.0
