import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.ops import gen_nn_ops


@tf.custom_gradient
def _guided_relu_grad(x):
    y = tf.nn.relu(x)
    def grad_fn(grad):
        return tf.where(0. < grad, gen_nn_ops.relu_grad(grad, y), tf.zeros(tf.shape(grad)))
    return y, grad_fn


def guided_features(images, kernel):
    """Guided backprop through one conv layer: the convolution and the pooling around the Relu
    make no Relu op of their own."""
    conv = tf.nn.conv2d(images, kernel, strides=[1, 1, 1, 1], padding='SAME')
    act = _guided_relu_grad(conv)
    pooled = tf.nn.max_pool(act, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='VALID')
    return tf.reshape(pooled, [tf.shape(pooled)[0], -1])
