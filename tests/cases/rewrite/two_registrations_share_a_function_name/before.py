import tensorflow as tf


@tf.RegisterGradient("GuidedReluTwin")
def _relu_grad(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0, grad.dtype)


@tf.RegisterGradient("DeconvReluTwin")
def _relu_grad(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad))


def guided(x):
    with tf.get_default_graph().gradient_override_map({"Relu": "GuidedReluTwin"}):
        return tf.nn.relu(x)


def deconv(x):
    with tf.get_default_graph().gradient_override_map({"Relu": "DeconvReluTwin"}):
        return tf.nn.relu(x)


def entry(x):
    return guided(x) + deconv(x) * 2.0
