import tensorflow as tf


def quantize(x, l=0.5):
    @tf.custom_gradient
    def _scale(x):
        def grad_fn(grad):
            return [grad * l]
        return tf.identity(x), grad_fn
    # registered once per scale
    # scaled copy
    # the op whose gradient is scaled
    y = _scale(x)
    # an alternative that was tried:
    #     y = tf.identity(x * 2.0)
    return binarize(y)


def binarize(x):
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.sign(x), grad_fn
    y = _sign_straight_through(x)
    # commented-out clipping, kept on purpose:
    # y = tf.clip_by_value(y, -1.0, 1.0)
    return y


def entry(x):
    return quantize(x)
