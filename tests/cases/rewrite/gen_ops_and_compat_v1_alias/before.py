import tensorflow.compat.v1 as tf
from tensorflow.python.ops import gen_math_ops


def binarize(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": "Identity"}):
        return gen_math_ops.sign(x)
