import tensorflow as tf
from tensorflow.python.framework import function


@function.Defun(tf.float32, python_grad_func=lambda op, g: g * 0.25, func_name="QuarterGradient")
def quarter_gradient(x):
    return x


def damped(x, scope="damped"):
    # TF1's Defun took `name=` for the function-call op it made
    return quarter_gradient(tf.tanh(x), name=scope + "/quarter") * 2.0
