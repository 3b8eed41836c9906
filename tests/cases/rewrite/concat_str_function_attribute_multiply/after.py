import tensorflow as tf
from tensorflow.python.framework import ops


def flip(x, learning_rate=1.0):
    try:
        flip.count += 1
    except AttributeError:
        flip.count = 1

    @tf.custom_gradient
    def _flip_grad(x):
        def grad_fn(grad):
            return [tf.multiply(grad, -learning_rate)]
        return tf.identity(x), grad_fn

    y = _flip_grad(x)
    return y
