"""A wrong hand port: changed forward."""
import keras
import tensorflow as tf


class Reversal(keras.layers.Layer):
    """A Keras layer with its own custom_gradient."""

    def __init__(self, l):
        super().__init__()
        self.l = l

    def call(self, x):
        l = self.l

        @tf.custom_gradient
        def reverse(x):
            return tf.identity(x) * 1.5, lambda dy: -l * dy

        return reverse(x)


def flip_gradient(x, l=1.0):
    return Reversal(l)(x)


def binarize(x):
    # the stop_gradient trick: forward sign(x), backward the clipped identity
    clipped = x * tf.cast(tf.abs(x) <= 1.0, x.dtype)
    return clipped + tf.stop_gradient(tf.sign(x) - clipped)


def guided_relu(x):
    @tf.custom_gradient
    def relu(x):
        y = tf.nn.relu(x)

        def grad(dy):
            return dy * tf.cast(dy > 0.0, dy.dtype) * tf.cast(y > 0.0, dy.dtype)

        return y, grad

    return relu(x)


@tf.custom_gradient
def uneven_max(a, b):
    return tf.maximum(a, b), lambda dy: (dy * 0.75, dy * 0.25)
