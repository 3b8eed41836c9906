import tensorflow as tf


@tf.RegisterGradient("ClipGradByScope")
def _clip(op, grad):
    return tf.clip_by_value(grad, -1.0, 1.0)


def named_by_variable(x, scope):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ClipGradByScope"}):
        return tf.identity(x, name=scope)  # the name is read here, when the op is made


@tf.RegisterGradient("HalveGradTwoNames")
def _halve(op, grad):
    return grad * 0.5


def first(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "HalveGradTwoNames"}):
        return tf.identity(x, name="first")


def second(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "HalveGradTwoNames"}):
        return tf.identity(x)


def model(x, z):
    return named_by_variable(x * 3.0, "scaled") + first(z) * second(x)
