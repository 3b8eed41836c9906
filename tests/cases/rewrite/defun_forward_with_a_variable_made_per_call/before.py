import tensorflow as tf
from tensorflow.python.framework.function import Defun


def scaled_sign_quantizer(init=0.5):
    """A trained scale per call (TTQ's shape): the variable is made by the wrapper, each time it
    is called, then handed to the Defun; a second `init` makes a second run of the same function."""

    @Defun(tf.float32, tf.float32, tf.float32)
    def backward(weights, scale, grad):
        return grad * scale, tf.reduce_sum(grad * tf.sign(weights))

    @Defun(tf.float32, tf.float32, grad_func=backward)
    def forward(weights, scale):
        return tf.sign(weights) * scale

    def wrapper(weights):
        scale = tf.compat.v1.get_variable("scale", initializer=init)
        return forward(weights, scale)

    return wrapper
