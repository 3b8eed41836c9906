import tensorflow as tf


@tf.custom_gradient
def _reverse_chain(x):
    def grad_fn(grad):
        return -2.0 * grad
    return tf.identity(x), grad_fn


def reversed_twice(x):
    return _reverse_chain(x)
