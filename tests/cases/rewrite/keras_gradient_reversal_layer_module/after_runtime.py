"""The Keras 2 gradient reversal layer module, as widely copied: a function counting its calls in
an attribute of its own, a layer whose build says it has no weights, Layer from keras.engine."""
import tensorflow as tf
from keras.layers import Layer
from tensorflow.keras import backend as K
import tf_grl_migrate


def reverse_gradient(X, hp_lambda):
    """Identity forward; the gradient times -hp_lambda backward."""
    try:
        reverse_gradient.num_calls += 1
    except AttributeError:
        reverse_gradient.num_calls = 1

    y = tf_grl_migrate.flip_gradient(X, hp_lambda)

    return y


class GradientReversal(Layer):
    """Flips the sign of the gradient during training."""

    def __init__(self, hp_lambda, **kwargs):
        super(GradientReversal, self).__init__(**kwargs)
        self.supports_masking = False
        self.hp_lambda = hp_lambda

    def build(self, input_shape):
        pass

    def call(self, x, mask=None):
        return reverse_gradient(x, self.hp_lambda)

    def get_output_shape_for(self, input_shape):
        return input_shape

    def get_config(self):
        config = {"hp_lambda": self.hp_lambda}
        base_config = super(GradientReversal, self).get_config()
        return dict(list(base_config.items()) + list(config.items()))


class ScheduledReversal(Layer):
    """Its lambda in a backend variable, moved by a callback with K.set_value."""

    def __init__(self, hp_lambda, **kwargs):
        super(ScheduledReversal, self).__init__(**kwargs)
        self.hp_lambda = K.variable(hp_lambda, name="hp_lambda")

    def build(self, input_shape):
        super(ScheduledReversal, self).build(input_shape)

    def call(self, x, mask=None):
        return reverse_gradient(x, self.hp_lambda)

    def set_hp_lambda(self, value):
        K.set_value(self.hp_lambda, value)

    def get_config(self):
        config = {"hp_lambda": float(K.get_value(self.hp_lambda))}
        base_config = super(ScheduledReversal, self).get_config()
        return dict(list(base_config.items()) + list(config.items()))
