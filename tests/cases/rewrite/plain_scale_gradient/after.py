import tensorflow as tf


def scale_gradient(x, s):
    """Forward identity, gradient scaled by s (no reversal)."""

    @tf.custom_gradient
    def _scale(x):
        def grad_fn(grad):
            return [grad * s]
        return tf.identity(x), grad_fn

    y = _scale(x)
    return y
