import tensorflow as tf

x = tf.constant([1.0, 2.0])
g = tf.get_default_graph()
with g.gradient_override_map({"Identity": "LateFlip"}):
    y = tf.identity(x)


@tf.RegisterGradient("LateFlip")
def _late_flip(op, grad):
    return -grad


def build(x):
    with tf.get_default_graph().gradient_override_map({"Sign": "LateSign"}):
        y = tf.sign(x)

    @tf.RegisterGradient("LateSign")
    def _late_sign(op, grad):
        return grad

    return y
