import tensorflow as tf


def _flip_grad_fn(op, grad):
    return [tf.negative(grad)]


tf.RegisterGradient("FlipGradientConst")(_flip_grad_fn)


def flip(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "FlipGradientConst"}):
        y = tf.identity(x)
    return y
