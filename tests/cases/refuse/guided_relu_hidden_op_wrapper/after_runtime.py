"""Guided backprop as most copies have it: TF1's underscored wrapper of the hidden ReluGrad op
(gen_nn_ops._relu_grad, gen_nn_ops.relu_grad since TF 1.5), and a model the tool cannot see."""
import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.ops import gen_nn_ops
import tf_grl_migrate


@ops.RegisterGradient("GuidedReluHidden")
def _guided_relu_grad(op, grad):
    return tf.where(0. < grad, gen_nn_ops.relu_grad(grad, op.outputs[0]), tf.zeros_like(grad))


def guided_saliency(x, model_fn):
    with tf_grl_migrate.gradient_override_map({"Relu": "GuidedReluHidden"}):
        logits = model_fn(x)
    return logits
