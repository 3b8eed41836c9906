import tensorflow as tf


def flip_gradient(x, l=1.0):
    grad_name = "FlipTensorGraph%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    with x.graph.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
