import tensorflow as tf
from tensorflow.python.framework import function


def _scaled_grad(op, grad):
    return grad * tf.cast(op.get_attr("scale"), grad.dtype)


@function.Defun(tf.float32, python_grad_func=_scaled_grad)
def scaled(x):
    return x * 2.0
