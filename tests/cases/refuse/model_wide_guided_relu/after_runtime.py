import tensorflow as tf
from tensorflow.python.ops import gen_nn_ops
import tf_grl_migrate


@tf.RegisterGradient("GuidedRelu")
def _guided_relu(op, grad):
    return tf.where(0.0 < grad, gen_nn_ops.relu_grad(grad, op.outputs[0]), tf.zeros_like(grad))


def saliency_logits(build_model, images):
    with tf_grl_migrate.gradient_override_map({"Relu": "GuidedRelu"}):
        logits = build_model(images)
    return logits
