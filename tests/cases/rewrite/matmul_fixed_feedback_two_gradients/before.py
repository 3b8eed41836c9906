import numpy as np
import tensorflow as tf

# feedback alignment: the backward pass uses a fixed random matrix instead of W^T
B = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)


@tf.RegisterGradient("FixedFeedbackMatMul")
def _fixed_feedback(op, grad):
    a = op.inputs[0]
    return [tf.matmul(grad, tf.transpose(B)), tf.matmul(tf.transpose(a), grad)]


def dense_fa(x, w):
    with tf.get_default_graph().gradient_override_map({"MatMul": "FixedFeedbackMatMul"}):
        return tf.matmul(x, w)
