import tensorflow as tf
from tensorflow.python.framework import function


@function.Defun(
    python_grad_func=lambda x, dy: tf.convert_to_tensor(dy) * 0.5,
    shape_func=lambda op: [op.inputs[0].get_shape()])
def halve_gradient(x):
    """Identity forward, half the gradient back."""
    return x


def layer(x):
    return tf.nn.relu(halve_gradient(x) * 3.0)
