import tensorflow as tf


@tf.RegisterGradient("SignedByCond")
def _signed(op, grad):
    # `strict=` is a keyword TF2's tf.cond does not take
    return tf.cond(tf.reduce_any(grad > 0), lambda: grad, lambda: -grad, strict=True)


def signed(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "SignedByCond"}):
        return tf.identity(x)
