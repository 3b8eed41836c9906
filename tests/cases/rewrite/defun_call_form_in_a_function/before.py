import tensorflow as tf
from tensorflow.python.framework import function


def _reverse_grad(op, grad):
    return -0.7 * grad


def double_it(x):
    return x * 2.0


def reversed_double(x):
    flip = function.Defun(tf.float32, python_grad_func=_reverse_grad, noinline=True)(double_it)
    return flip(x) + flip(x * 0.5)
