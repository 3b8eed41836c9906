import tensorflow as tf
import tf_grl_migrate


def scaled_reversal(x, weight):
    # the counter lives on the function itself
    scaled_reversal.calls = getattr(scaled_reversal, "calls", 0) + 1

    # a new plain session shares the default graph: only its graph is wanted
    out = tf_grl_migrate.flip_gradient(x, weight)
    return out
