import tensorflow as tf


def scaled_reversal(x, weight):
    # the counter lives on the function itself
    scaled_reversal.calls = getattr(scaled_reversal, "calls", 0) + 1
    name = "ScaledReversal%d" % scaled_reversal.calls

    @tf.RegisterGradient(name)
    def _reverse(op, grad):
        return [-weight * grad]

    # a new plain session shares the default graph: only its graph is wanted
    graph = tf.compat.v1.Session().graph
    with graph.gradient_override_map({"Identity": name}):
        out = tf.identity(x)
    return out
