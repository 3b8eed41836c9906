import tensorflow as tf


def binary_step(x):
    # straight-through step: Ceil passes the gradient on, the Sub sends it to its first input only
    @tf.custom_gradient
    def _ceil_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.compat.v1.ceil(x), grad_fn
    return _ceil_straight_through(_first_input_only(x * 2.0, tf.ones(tf.shape(x))))


@tf.custom_gradient
def _first_input_only(a, b):
    def grad_fn(grad):
        return [grad, tf.zeros(tf.shape(b))]
    return a - b, grad_fn
