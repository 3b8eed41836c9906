import tensorflow as tf
from tensorflow.python.framework import function


def scaled_matmul_grad(x, y, dr):
    return [0.5 * tf.matmul(dr, y, transpose_b=True), 2.0 * tf.matmul(x, dr, transpose_a=True)]


def _scaled_matmul_forward(x, y):
    return tf.matmul(x, y)


@tf.custom_gradient
def scaled_matmul(x, y):
    outputs = _scaled_matmul_forward(x, y)

    def grad(*dys):
        return scaled_matmul_grad(x, y, *dys)

    return outputs, grad
