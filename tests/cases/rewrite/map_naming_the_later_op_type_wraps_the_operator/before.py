import tensorflow as tf


@tf.RegisterGradient("BalancedSumGrad")
def _balanced_sum(op, grad):
    return [grad * 0.5, grad * 0.5]


@tf.RegisterGradient("SoftSquareGrad")
def _soft_square(op, grad):
    return [tf.sign(op.inputs[0]) * grad]


def soft_norm(a, b):
    # the map names AddV2, which `+` makes since TF 1.15: no doubt which op it overrides
    g = tf.get_default_graph()
    with g.gradient_override_map({"Square": "SoftSquareGrad", "AddV2": "BalancedSumGrad"}):
        return tf.sqrt(tf.square(a) + tf.square(b))
