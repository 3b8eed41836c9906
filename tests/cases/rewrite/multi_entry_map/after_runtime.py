import tensorflow as tf
import tf_grl_migrate


def reversed_binary(x):
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.sign(x), grad_fn
    h = tf_grl_migrate.flip_gradient(x, 1.0)
    b = _sign_straight_through(h)
    return b * 2.0 + h
