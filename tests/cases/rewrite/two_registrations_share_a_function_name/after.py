import tensorflow as tf


@tf.custom_gradient
def _guided_relu_twin(x):
    y = tf.nn.relu(x)
    def grad_fn(grad):
        return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(y > 0.0, grad.dtype)
    return y, grad_fn


@tf.custom_gradient
def _deconv_relu_twin(x):
    def grad_fn(grad):
        return tf.where(grad > 0.0, grad, tf.zeros_like(grad))
    return tf.nn.relu(x), grad_fn


def guided(x):
    return _guided_relu_twin(x)


def deconv(x):
    return _deconv_relu_twin(x)


def entry(x):
    return guided(x) + deconv(x) * 2.0
