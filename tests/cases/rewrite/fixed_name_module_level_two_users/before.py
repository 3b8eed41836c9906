import tensorflow as tf


@tf.RegisterGradient("ReverseGrad")
def _reverse_grad(op, grad):
    return [-grad]


def reverse(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "ReverseGrad"}):
        return tf.identity(x)


def reverse_pair(a, b):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ReverseGrad"}):
        a2 = tf.identity(a)
        b2 = tf.identity(b)
    return a2, b2
