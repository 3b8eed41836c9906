import tensorflow as tf


def _make_reverse_grad(scale):
    def _reverse_grad(op, grad):
        return [grad * -scale]

    return _reverse_grad


tf.RegisterGradient("ScaledReverse")(_make_reverse_grad(0.5))


def scaled_reverse(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "ScaledReverse"}):
        return tf.identity(x)
