import tensorflow as tf
from tensorflow.python.ops import gen_nn_ops

from names import CLIP_NAME, GUIDED_NAME


@tf.RegisterGradient(CLIP_NAME)
def _clip_grad(op, grad):
    return tf.clip_by_value(grad, -0.5, 0.5)


@tf.RegisterGradient(GUIDED_NAME)
def _guided_relu_grad(op, grad):
    return tf.where(0.0 < grad, gen_nn_ops.relu_grad(grad, op.outputs[0]), tf.zeros_like(grad))
