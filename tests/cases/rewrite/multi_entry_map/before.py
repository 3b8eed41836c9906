import tensorflow as tf


@tf.RegisterGradient("FlipG")
def _flip_g(op, grad):
    return [-grad]


def reversed_binary(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "FlipG", "Sign": "Identity"}):
        h = tf.identity(x)
        b = tf.sign(h)
    return b * 2.0 + h
