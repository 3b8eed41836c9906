import tensorflow as tf
from tensorflow.python.framework import ops as tf_ops
import tf_grl_migrate


def flip_gradient(x, l=1.0):
    return tf_grl_migrate.flip_gradient(x, l)
