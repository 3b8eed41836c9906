import tensorflow as tf


@tf.RegisterGradient("ReverseGrad")
def _reverse_grad(op, grad):
    return -grad


def reverse(x, gradient_override_map):
    """A parameter named like the map (a wrapper handed in): the cheap screen must still send the file on."""
    with gradient_override_map({"Identity": "ReverseGrad"}):
        return tf.identity(x)
