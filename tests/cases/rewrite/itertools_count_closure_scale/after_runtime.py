import itertools

import tensorflow as tf
import tf_grl_migrate


def make_reverser(scale):
    def reverse(x):
        return tf_grl_migrate.flip_gradient(x, scale)

    return reverse
