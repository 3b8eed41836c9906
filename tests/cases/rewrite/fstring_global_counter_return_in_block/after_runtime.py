import tensorflow as tf
import tf_grl_migrate

_num_calls = 0


def grad_reverse(x, alpha=1.0):
    """Gradient reversal layer."""
    global _num_calls
    _num_calls += 1
    return tf_grl_migrate.flip_gradient(x, alpha)
