import tensorflow as tf


def fixed_point(x, step=0.25):
    """Floor to a grid forward, identity backward; ceil for the upper bound."""
    @tf.custom_gradient
    def _floor_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.floor(x), grad_fn
    @tf.custom_gradient
    def _ceil_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.math.ceil(x), grad_fn
    low = _floor_straight_through(x / step) * step
    high = _ceil_straight_through(x / step) * step
    return low + high
