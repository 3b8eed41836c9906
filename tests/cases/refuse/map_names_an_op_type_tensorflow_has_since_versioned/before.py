import tensorflow as tf


@tf.RegisterGradient("BalancedSumGrad")
def _balanced_sum(op, grad):
    return [grad * 0.5, grad * 0.5]


def balanced_sum(a, b):
    # `+` made an Add op before TF 1.15 and makes AddV2 since: which gradient did TF1 apply here?
    with tf.get_default_graph().gradient_override_map({"Add": "BalancedSumGrad"}):
        return tf.abs(a) + tf.abs(b)
