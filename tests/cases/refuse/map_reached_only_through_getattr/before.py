import tensorflow as tf


@tf.RegisterGradient("ReverseGrad")
def _reverse_grad(op, grad):
    return -grad


def reverse(x):
    """The map's name appears only as a string: the cheap screen must still send the file on."""
    g = tf.get_default_graph()
    with getattr(g, "gradient_override_map")({"Identity": "ReverseGrad"}):
        return tf.identity(x)
