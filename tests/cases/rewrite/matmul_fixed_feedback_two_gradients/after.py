import numpy as np
import tensorflow as tf
from tensorflow.python.ops import gen_math_ops

# feedback alignment: the backward pass uses a fixed random matrix instead of W^T
B = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)


@tf.custom_gradient
def _fixed_feedback(a_, b):
    def grad_fn(grad):
        a = a_
        return [tf.matmul(grad, tf.transpose(B)), tf.matmul(tf.transpose(a), grad)]
    return gen_math_ops.mat_mul(a_, b), grad_fn


def dense_fa(x, w):
    # always a MatMul op (tf.matmul makes BatchMatMulV2 for batches, which TF1 did not override)
    return _fixed_feedback(x, w)
