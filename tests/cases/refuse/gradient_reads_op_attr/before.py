import tensorflow as tf


@tf.RegisterGradient("CastAwareFlip")
def _cast_aware_flip(op, grad):
    dtype = op.get_attr("T")
    return [tf.cast(-grad, dtype)]


def flip(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "CastAwareFlip"}):
        return tf.identity(x)
