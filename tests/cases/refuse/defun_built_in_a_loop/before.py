import tensorflow as tf
from tensorflow.python.framework import function


def _grad(op, dy):
    return -dy


def reversals(x):
    out = []
    for dtype in (tf.float32, tf.float64):
        @function.Defun(dtype, python_grad_func=_grad)
        def flip(t):
            return tf.identity(t)
        out.append(flip(tf.cast(x, dtype)))
    return out
