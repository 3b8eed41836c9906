import tensorflow as tf


def flip_gradient(x, l=1.0):
    grad_name = "FlipDictVar%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    override = {"Identity": grad_name}
    g = tf.get_default_graph()
    with g.gradient_override_map(override):
        y = tf.identity(x)
    return y
