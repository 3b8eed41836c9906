import tensorflow as tf

_REGISTERED = set()


def flip_gradient(x, l=1.0):
    grad_name = "FlipGradient_%s" % l
    if grad_name not in _REGISTERED:
        @tf.RegisterGradient(grad_name)
        def _flip(op, grad):
            return [tf.negative(grad) * l]

        _REGISTERED.add(grad_name)
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
