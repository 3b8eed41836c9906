import tensorflow as tf


def quarter_steps(x):
    # one map for every quantizer of the model: this block makes no Sign op
    @tf.custom_gradient
    def _round_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.round(x), grad_fn
    return _round_straight_through(x * 4.0) / 4.0
