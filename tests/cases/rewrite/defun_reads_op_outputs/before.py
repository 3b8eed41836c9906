import tensorflow as tf
from tensorflow.python.framework import function


def _sign_sqrt_grad(op, dy_root, dy_square):
    root, square = op.outputs[0], op.outputs[1]
    x = op.inputs[0]
    return dy_root * 0.5 / (tf.abs(root) + 1e-3) + dy_square * 2.0 * x + 0.0 * square


@function.Defun(tf.float32, python_grad_func=_sign_sqrt_grad)
def sign_sqrt_and_square(x):
    return tf.sign(x) * tf.sqrt(tf.abs(x) + 1e-6), tf.square(x)


def features(x):
    root, square = sign_sqrt_and_square(x)
    again = sign_sqrt_and_square(x * 2.0)[0]
    return root + 0.1 * square + again
