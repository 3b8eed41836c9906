import tensorflow as tf


@tf.RegisterGradient("EvenMaximumGrad")
def _even_maximum_grad(op, grad):
    # split the gradient evenly between both inputs, whichever is larger
    return [grad * 0.5, grad * 0.5]


def soft_max_of(a, b):
    with tf.get_default_graph().gradient_override_map({"Maximum": "EvenMaximumGrad"}):
        return tf.maximum(a, b)
