import tensorflow as tf
from tensorflow.python.framework import ops


def flip_gradient(x, hp_lambda):
    @tf.custom_gradient
    def _flip(x):
        def grad_fn(grad):
            return [tf.negative(grad) * hp_lambda]
        return tf.identity(x), grad_fn

    y = _flip(x)
    return y


class GradientReversal(tf.keras.layers.Layer):
    """Flips the sign of the gradient during training."""

    def __init__(self, hp_lambda, **kwargs):
        super(GradientReversal, self).__init__(**kwargs)
        self.hp_lambda = hp_lambda

    def call(self, x, mask=None):
        return flip_gradient(x, self.hp_lambda)

    def get_config(self):
        config = {"hp_lambda": self.hp_lambda}
        base_config = super(GradientReversal, self).get_config()
        return dict(list(base_config.items()) + list(config.items()))
