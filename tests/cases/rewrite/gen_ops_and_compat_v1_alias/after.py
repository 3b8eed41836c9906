import tensorflow.compat.v1 as tf
from tensorflow.python.ops import gen_math_ops


def binarize(x):
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return gen_math_ops.sign(x), grad_fn
    return _sign_straight_through(x)
