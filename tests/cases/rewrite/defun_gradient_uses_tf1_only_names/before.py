"""A straight-through clip whose Defun gradient is written with TF1-only names."""
import tensorflow as tf
from tensorflow.python.framework import function


def _clip_grad(op, dy):
    inside = tf.to_float(tf.less_equal(tf.abs(op.inputs[0]), 1.0))
    return tf.multiply(dy, inside) + tf.log(tf.ones_like(dy))


@function.Defun(tf.float32, python_grad_func=_clip_grad)
def hard_tanh(x):
    return tf.clip_by_value(x, -1.0, 1.0)


def block(x):
    return hard_tanh(x * 1.5) * 2.0
