import tensorflow as tf
from tensorflow.python.framework import function


def _halve_gradient_forward(x):
    """Identity forward, half the gradient back."""
    return x


@tf.custom_gradient
def halve_gradient(x):
    outputs = _halve_gradient_forward(x)

    def grad(*dys):
        return (lambda x, dy: tf.convert_to_tensor(dy) * 0.5)(None, *dys)

    return outputs, grad


def layer(x):
    return tf.nn.relu(halve_gradient(x) * 3.0)
