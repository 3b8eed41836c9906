import tensorflow as tf
import tf_grl_migrate


def flip(x):
    y = tf_grl_migrate.flip_gradient(x, 1.0)
    return y
