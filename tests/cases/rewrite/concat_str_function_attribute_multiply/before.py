import tensorflow as tf
from tensorflow.python.framework import ops


def flip(x, learning_rate=1.0):
    try:
        flip.count += 1
    except AttributeError:
        flip.count = 1
    grad_name = "FlipGrad" + str(flip.count)

    @ops.RegisterGradient(grad_name)
    def _flip_grad(unused_op, grad):
        return [tf.multiply(grad, -learning_rate)]

    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
