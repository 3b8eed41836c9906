import tensorflow as tf


@tf.RegisterGradient("HalfGradReceivers")
def _half(op, grad):
    return grad * 0.5


def by_branch(x, plain=False):
    if plain:
        eval_graph = tf.get_default_graph()
        with eval_graph.gradient_override_map({"Sign": "Identity"}):
            y = tf.sign(x)
    else:
        eval_graph = tf.get_default_graph()
        with eval_graph.gradient_override_map({"Identity": "HalfGradReceivers"}):
            y = tf.identity(x)
    return y


class Binarizer:
    def __init__(self):
        self.G = tf.compat.v1.get_default_graph()  # as tf_upgrade_v2 leaves it

    def binarize(self, x):
        with self.G.gradient_override_map({"Sign": "Identity"}):
            return tf.sign(x)


def through_tensor(x):
    with x.graph.gradient_override_map({"Round": "Identity"}):
        return tf.round(x)


def entry(x):
    return by_branch(x) + Binarizer().binarize(x) * through_tensor(x) + by_branch(x, plain=True)
