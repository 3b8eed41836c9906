import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("ConvFlip")
def _conv_flip(op, grad):
    return [-grad, None]


def conv(x, w):
    with tf_grl_migrate.gradient_override_map({"Conv2D": "ConvFlip"}):
        return tf.nn.conv2d(x, w, strides=1, padding="SAME")
