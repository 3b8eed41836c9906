import tensorflow as tf
import tf_grl_migrate


def reversed_twice(x):
    return tf_grl_migrate.flip_gradient(x, 2.0)
