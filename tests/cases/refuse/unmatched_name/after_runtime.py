import tensorflow as tf
import tf_grl_migrate


def flip_with(x, grad_name):
    with tf_grl_migrate.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
