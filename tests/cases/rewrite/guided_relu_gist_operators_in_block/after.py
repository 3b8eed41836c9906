import tensorflow as tf
from tensorflow.python.ops import gen_nn_ops


@tf.custom_gradient
def _guided_relu_grad(x):
    y = tf.nn.relu(x)
    def grad_fn(grad):
        return tf.where(0.0 < grad, gen_nn_ops.relu_grad(grad, y), tf.zeros(grad.get_shape()))
    return y, grad_fn


def guided_square(x):
    y = _guided_relu_grad(x)
    z = -y ** 2 + tf.reduce_sum(y) * 0.1
    return z
