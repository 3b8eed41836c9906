import tensorflow as tf
from tensorflow.python.framework import function


def _reverse_grad(op, grad):
    return -0.7 * grad


def double_it(x):
    return x * 2.0


def reversed_double(x):
    @tf.custom_gradient
    def flip(x):
        outputs = double_it(x)

        def grad(*dys):
            return _reverse_grad(None, *dys)

        return outputs, grad
    return flip(x) + flip(x * 0.5)
