import tensorflow as tf


@tf.RegisterGradient("PassFirst")
def _pass_first(op, grad):
    return grad


def one_input(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "PassFirst"}):
        return tf.identity(x)


def two_inputs(x, y):
    # one function cannot be the custom gradient of a one-input and a two-input op
    with tf.get_default_graph().gradient_override_map({"Maximum": "PassFirst"}):
        return tf.maximum(x, y)
