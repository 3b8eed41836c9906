import random

import tensorflow as tf


def reverse_gradient(x, l=1.0):
    # a random name so that every call registers its own gradient
    @tf.custom_gradient
    def _reverse(x):
        def grad_fn(grad):
            return [tf.scalar_mul(-l, grad)]
        return tf.identity(x), grad_fn

    y = _reverse(x)
    return y
