"""A straight-through clip whose Defun gradient is written with TF1-only names."""
import tensorflow as tf
from tensorflow.python.framework import function
import types


def _clip_grad(op, dy):
    inside = tf.compat.v1.to_float(tf.less_equal(tf.abs(op.inputs[0]), 1.0))
    return tf.multiply(dy, inside) + tf.compat.v1.log(tf.ones_like(dy))


def _hard_tanh_forward(x):
    return tf.clip_by_value(x, -1.0, 1.0)


@tf.custom_gradient
def hard_tanh(x):
    outputs = _hard_tanh_forward(x)

    def grad(*dys):
        op = types.SimpleNamespace(inputs=[x])
        return _clip_grad(op, *dys)

    return outputs, grad


def block(x):
    return hard_tanh(x * 1.5) * 2.0
