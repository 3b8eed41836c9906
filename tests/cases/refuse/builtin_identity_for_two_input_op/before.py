import tensorflow as tf
from tensorflow.python.ops import gen_math_ops


def straight_through_matmul(a, b):
    # 'Identity' passes one gradient through; a MatMul has two inputs: which one gets it?
    with tf.get_default_graph().gradient_override_map({"MatMul": "Identity"}):
        return gen_math_ops.mat_mul(a, b)
