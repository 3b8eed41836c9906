import tensorflow as tf


@tf.RegisterGradient("ReverseChain")
def _reverse_chain(op, grad):
    return -2.0 * grad


def reversed_twice(x):
    target = "ReverseChain"
    graph = tf.get_default_graph()
    g = graph
    with g.gradient_override_map({"Identity": target}):
        return tf.identity(x)
