import uuid

import tensorflow as tf


def gradient_reversal(features, scale=1.0):
    @tf.custom_gradient
    def _grl(x):
        def grad_fn(grad):
            neg = tf.negative(grad)
            neg = neg * scale
            return [neg]
        return tf.identity(x), grad_fn

    features = _grl(features)
    return features
