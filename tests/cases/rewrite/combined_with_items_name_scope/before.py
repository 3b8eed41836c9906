import tensorflow as tf


def flip_gradient(x, l=1.0):
    grad_name = "FlipScoped%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    g = tf.get_default_graph()
    with tf.name_scope("grl"), g.gradient_override_map({"Identity": grad_name}):  # reverse here
        y = tf.identity(x)
    return y
