import tensorflow as tf

import grads  # noqa: F401  (registers the gradients)
from names import CLIP_NAME


def clipped(x):
    with tf.get_default_graph().gradient_override_map({"Identity": CLIP_NAME}):
        return tf.identity(x)
