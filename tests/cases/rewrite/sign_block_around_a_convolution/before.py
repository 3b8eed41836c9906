import tensorflow as tf


def binary_conv(x, w):
    """A binarized convolution: the weights' sign passes gradients straight through; the
    convolution, reshape and cast in the same block make no Sign op of their own."""
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": "Identity"}):
        wb = tf.sign(w)
        y = tf.nn.conv2d(x, wb, strides=[1, 1, 1, 1], padding="SAME")
        y = tf.reshape(y, [tf.shape(y)[0], -1])
        return tf.cast(y, tf.float32)
