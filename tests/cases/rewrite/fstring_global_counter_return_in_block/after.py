import tensorflow as tf

_num_calls = 0


def grad_reverse(x, alpha=1.0):
    """Gradient reversal layer."""
    global _num_calls
    _num_calls += 1

    @tf.custom_gradient
    def _grad(x):
        def grad_fn(grad):
            return [grad * -alpha]
        return tf.identity(x), grad_fn

    return _grad(x)
