"""A 2016 DANN copy: the gradient is written with names TensorFlow removed in 1.0."""
import tensorflow as tf


class FlipGradientBuilder(object):
    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, l=1.0):
        @tf.custom_gradient
        def _flip_gradients(x):
            def grad_fn(grad):
                return [tf.multiply(tf.negative(grad), l)]
            return tf.identity(x), grad_fn

        y = _flip_gradients(x)

        self.num_calls += 1
        return y


flip_gradient = FlipGradientBuilder()


@tf.custom_gradient
def _shrink(x):
    def grad_fn(grad):
        return tf.subtract(grad, tf.compat.v1.where(grad > 0.0, 0.5 * grad, tf.zeros_like(grad)))
    return tf.identity(x), grad_fn


def shrink(x):
    return _shrink(x)


def entry(x):
    return shrink(flip_gradient(x, 0.3))
