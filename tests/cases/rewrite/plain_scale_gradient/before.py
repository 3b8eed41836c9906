import tensorflow as tf


def scale_gradient(x, s):
    """Forward identity, gradient scaled by s (no reversal)."""
    grad_name = "ScaleGradient%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _scale(op, grad):
        return [grad * s]

    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
