import tensorflow as tf
import tf_grl_migrate


def reverse(x):
    return tf_grl_migrate.flip_gradient(x, 1.0)


def reverse_pair(a, b):
    a2 = tf_grl_migrate.flip_gradient(a, 1.0)
    b2 = tf_grl_migrate.flip_gradient(b, 1.0)
    return a2, b2
