import tensorflow as tf


@tf.custom_gradient
def _noisy(x):
    def grad_fn(grad):
        noise = tf.compat.v1.random_uniform(tf.shape(grad), minval=0.9, maxval=1.1)
        return tf.negative(grad) * tf.compat.v1.to_float(noise > 0.0)
    return tf.identity(x), grad_fn


def flip(x):
    return _noisy(x)


def entry(x):
    return flip(x)
