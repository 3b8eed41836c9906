from tensorflow.python.framework import ops
from tensorflow.python.ops import array_ops
from tensorflow.python.ops import math_ops
import tf_grl_migrate


def reverse(x):
    return tf_grl_migrate.flip_gradient(x, 0.3)
