import tensorflow as tf
from tensorflow.python.framework import function


def _quarter_gradient_forward(x):
    return x


@tf.custom_gradient
def quarter_gradient(x):
    outputs = _quarter_gradient_forward(x)

    def grad(*dys):
        return (lambda op, g: g * 0.25)(None, *dys)

    return outputs, grad


def damped(x, scope="damped"):
    # TF1's Defun took `name=` for the function-call op it made
    return quarter_gradient(tf.tanh(x)) * 2.0
