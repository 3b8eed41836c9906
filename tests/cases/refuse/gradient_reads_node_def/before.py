import tensorflow as tf


@tf.RegisterGradient("NamedFlip")
def _named_flip(op, grad):
    scale = 2.0 if "scaled" in op.node_def.name else 1.0
    return [-grad * scale]


def flip(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "NamedFlip"}):
        return tf.identity(x)
