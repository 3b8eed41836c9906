import tensorflow as tf

_REGISTERED = set()


def quantize(x, l=0.5):
    grad_name = "ScaleGradComments_%s" % l
    if grad_name not in _REGISTERED:
        @tf.RegisterGradient(grad_name)
        def _scale(op, grad):
            return [grad * l]

        _REGISTERED.add(grad_name)
        # registered once per scale
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):  # scaled copy
        # the op whose gradient is scaled
        y = tf.identity(x)
        # an alternative that was tried:
        #     y = tf.identity(x * 2.0)
    return binarize(y)


def binarize(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": "Identity"}):
        y = tf.sign(x)
        # commented-out clipping, kept on purpose:
        # y = tf.clip_by_value(y, -1.0, 1.0)
    return y


def entry(x):
    return quantize(x)
