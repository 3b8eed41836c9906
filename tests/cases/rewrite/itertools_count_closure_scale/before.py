import itertools

import tensorflow as tf

_ids = itertools.count()


def make_reverser(scale):
    def reverse(x):
        name = "Reverse%d" % next(_ids)

        @tf.RegisterGradient(name)
        def _rev(op, grad):
            return [-grad * scale]

        with tf.get_default_graph().gradient_override_map({"Identity": name}):
            return tf.identity(x)

    return reverse
