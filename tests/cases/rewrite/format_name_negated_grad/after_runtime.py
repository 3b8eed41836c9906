import tensorflow as tf
import tf_grl_migrate


class GradientReverser:
    """Reverses gradients on the way back (DANN)."""

    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, hp_lambda=1.0):
        y = tf_grl_migrate.flip_gradient(x, hp_lambda)
        self.num_calls += 1
        return y


reverse_gradient = GradientReverser()
