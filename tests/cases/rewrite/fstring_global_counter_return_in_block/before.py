import tensorflow as tf

_num_calls = 0


def grad_reverse(x, alpha=1.0):
    """Gradient reversal layer."""
    global _num_calls
    _num_calls += 1
    name = f"GradReverse_{_num_calls}"

    @tf.RegisterGradient(name)
    def _grad(op, grad):
        return [grad * -alpha]

    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": name}):
        return tf.identity(x)
