import numpy as np
import tensorflow as tf
from tensorflow.python.ops import gen_math_ops

# feedback alignment: the backward pass uses a fixed random matrix instead of W^T
B = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)


@tf.RegisterGradient("FixedFeedbackMatMul")
def _fixed_feedback(op, grad):
    a = op.inputs[0]
    return [tf.matmul(grad, tf.transpose(B)), tf.matmul(tf.transpose(a), grad)]


def dense_fa(x, w):
    # always a MatMul op (tf.matmul makes BatchMatMulV2 for batches, which TF1 did not override)
    with tf.get_default_graph().gradient_override_map({"MatMul": "FixedFeedbackMatMul"}):
        return gen_math_ops.mat_mul(x, w)
