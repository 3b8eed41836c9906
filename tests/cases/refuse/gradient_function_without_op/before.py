import tensorflow as tf

_calls = [0]


def negate_gradient(x, scale):
    # the gradient function forgot `op`: TF1 itself raises a TypeError once the gradient is taken
    _calls[0] += 1
    name = "NegateGrad%d" % _calls[0]

    @tf.RegisterGradient(name)
    def _negate(grad):
        return [-grad * scale]

    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": name}):
        return tf.identity(x)
