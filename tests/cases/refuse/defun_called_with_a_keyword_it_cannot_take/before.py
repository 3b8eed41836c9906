import tensorflow as tf
from tensorflow.python.framework import function


@function.Defun(tf.float32, python_grad_func=lambda op, g: g * 0.25)
def quarter_gradient(x):
    return x


def damped(x, options):
    # the keywords come from a dict the tool cannot read: `name=`, or attributes of the call
    return quarter_gradient(x, **options)
