import tensorflow as tf


@tf.custom_gradient
def _balanced_sum(a, b):
    def grad_fn(grad):
        return [grad * 0.5, grad * 0.5]
    return a + b, grad_fn


@tf.custom_gradient
def _soft_square(x):
    def grad_fn(grad):
        return [tf.sign(x) * grad]
    return tf.square(x), grad_fn


def soft_norm(a, b):
    # the map names AddV2, which `+` makes since TF 1.15: no doubt which op it overrides
    return tf.sqrt(_balanced_sum(_soft_square(a), _soft_square(b)))
