from tensorflow.python.framework import ops
from tensorflow.python.ops import array_ops
from tensorflow.python.ops import math_ops
import tensorflow as tf


@tf.custom_gradient
def _reverse_grad(x):
    def grad_fn(grad):
        return [math_ops.negative(grad) * 0.3]
    return array_ops.identity(x), grad_fn


def reverse(x):
    return _reverse_grad(x)
