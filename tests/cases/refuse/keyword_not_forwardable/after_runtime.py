import tensorflow as tf
from tensorflow.python.ops import gen_math_ops
import tf_grl_migrate


def named_by_a_call(x, make_name):
    # the generated straight-through function is defined before the block: a call in `name=` would move
    with tf_grl_migrate.gradient_override_map({"Sign": "Identity"}):
        return tf.sign(x, name=make_name())


@tf.RegisterGradient("MatMulFeedbackKw")
def _feedback(op, grad):
    return [tf.matmul(grad, op.inputs[1]), None]


def other_keyword(a, b):
    with tf_grl_migrate.gradient_override_map({"MatMul": "MatMulFeedbackKw"}):
        return gen_math_ops.mat_mul(a, b, transpose_b=True)
