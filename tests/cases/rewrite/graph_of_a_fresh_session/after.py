import tensorflow as tf


def scaled_reversal(x, weight):
    # the counter lives on the function itself
    scaled_reversal.calls = getattr(scaled_reversal, "calls", 0) + 1

    @tf.custom_gradient
    def _reverse(x):
        def grad_fn(grad):
            return [-weight * grad]
        return tf.identity(x), grad_fn

    # a new plain session shares the default graph: only its graph is wanted
    out = _reverse(x)
    return out
