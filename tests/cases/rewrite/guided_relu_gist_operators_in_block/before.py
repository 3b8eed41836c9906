import tensorflow as tf
from tensorflow.python.ops import gen_nn_ops


@tf.RegisterGradient("GuidedReluGist")
def _guided_relu_grad(op, grad):
    return tf.where(0.0 < grad, gen_nn_ops.relu_grad(grad, op.outputs[0]), tf.zeros(grad.get_shape()))


def guided_square(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Relu": "GuidedReluGist"}):
        y = tf.nn.relu(x)
        z = -y ** 2 + tf.reduce_sum(y) * 0.1
    return z
