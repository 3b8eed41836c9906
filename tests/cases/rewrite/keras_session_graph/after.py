import tensorflow as tf
from tensorflow.python.keras import backend as K


def flip_gradient(x, l=1.0):
    @tf.custom_gradient
    def _flip(x):
        def grad_fn(grad):
            return [tf.negative(grad) * l]
        return tf.identity(x), grad_fn

    y = _flip(x)
    return y
