import tensorflow as tf
from tensorflow.python.framework import ops
import tf_grl_migrate


def flip(x, learning_rate=1.0):
    try:
        flip.count += 1
    except AttributeError:
        flip.count = 1
    y = tf_grl_migrate.flip_gradient(x, learning_rate)
    return y
