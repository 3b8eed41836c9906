import tensorflow as tf
from tensorflow.python.ops import gen_math_ops


@tf.RegisterGradient("ClipGradByScope")
def _clip(op, grad):
    return tf.clip_by_value(grad, -1.0, 1.0)


def named_by_variable(x, scope):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ClipGradByScope"}):
        return tf.identity(x, name=scope)  # the registration's function lives elsewhere


@tf.RegisterGradient("ClipGradTwoNames")
def _clip_two(op, grad):
    return tf.clip_by_value(grad, -1.0, 1.0)


def first(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "ClipGradTwoNames"}):
        return tf.identity(x, name="first")


def second(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "ClipGradTwoNames"}):
        return tf.identity(x, name="second")


def named_by_a_call(x, make_name):
    with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
        return tf.sign(x, name=make_name())


@tf.RegisterGradient("MatMulFeedbackKw")
def _feedback(op, grad):
    return [tf.matmul(grad, op.inputs[1]), None]


def other_keyword(a, b):
    with tf.get_default_graph().gradient_override_map({"MatMul": "MatMulFeedbackKw"}):
        return gen_math_ops.mat_mul(a, b, transpose_b=True)
