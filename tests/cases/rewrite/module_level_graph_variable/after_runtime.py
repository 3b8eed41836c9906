import tensorflow as tf
import tf_grl_migrate


def flip_gradient(x, l=1.0):
    y = tf_grl_migrate.flip_gradient(x, l)
    return y
