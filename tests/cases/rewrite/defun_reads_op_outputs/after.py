import tensorflow as tf
from tensorflow.python.framework import function
import types


def _sign_sqrt_grad(op, dy_root, dy_square):
    root, square = op.outputs[0], op.outputs[1]
    x = op.inputs[0]
    return dy_root * 0.5 / (tf.abs(root) + 1e-3) + dy_square * 2.0 * x + 0.0 * square


def _sign_sqrt_and_square_forward(x):
    return tf.sign(x) * tf.sqrt(tf.abs(x) + 1e-6), tf.square(x)


@tf.custom_gradient
def sign_sqrt_and_square(x):
    outputs = _sign_sqrt_and_square_forward(x)

    def grad(*dys):
        op = types.SimpleNamespace(inputs=[x], outputs=list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])
        return _sign_sqrt_grad(op, *dys)

    return outputs, grad


def features(x):
    root, square = sign_sqrt_and_square(x)
    again = sign_sqrt_and_square(x * 2.0)[0]
    return root + 0.1 * square + again
