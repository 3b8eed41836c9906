import tensorflow as tf


def flip_with(x, grad_name):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
