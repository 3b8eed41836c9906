"""A gradient reversal module its users star-import: they take `tf` and `GRAD_NAME` from here."""
import tensorflow as tf
from tensorflow.python.framework import ops

GRAD_NAME = "FlipStarRepo"


@ops.RegisterGradient(GRAD_NAME)
def _flip(op, grad):
    return [-0.5 * grad]


def flip(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": GRAD_NAME}):
        y = tf.identity(x)
    return y
