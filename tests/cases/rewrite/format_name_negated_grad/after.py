import tensorflow as tf


class GradientReverser:
    """Reverses gradients on the way back (DANN)."""

    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, hp_lambda=1.0):
        @tf.custom_gradient
        def _reverse(x):
            def grad_fn(grad):
                return -grad * hp_lambda
            return tf.identity(x), grad_fn

        y = _reverse(x)
        self.num_calls += 1
        return y


reverse_gradient = GradientReverser()
