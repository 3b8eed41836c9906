import tf_grl_migrate


def reverse(x):
    return tf_grl_migrate.flip_gradient(x, 0.3)
