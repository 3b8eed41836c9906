import random

import tensorflow as tf


def reverse_gradient(x, l=1.0):
    # a random name so that every call registers its own gradient
    grad_name = "ReverseGrad%d" % random.randint(0, 10 ** 9)

    @tf.RegisterGradient(grad_name)
    def _reverse(op, grad):
        return [tf.scalar_mul(-l, grad)]

    with tf.get_default_graph().gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
