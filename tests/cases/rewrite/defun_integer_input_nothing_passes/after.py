"""meProp-style: the gradient keeps the k largest entries of each row; k is declared int32 and no
call in the module passes it."""
import tensorflow as tf
from tensorflow.python.framework import function
import types


def _keep_top_k_grad(op, dy):
    k = op.inputs[1]
    kth = tf.reduce_min(tf.nn.top_k(tf.abs(dy), k)[0], axis=1, keepdims=True)
    return dy * tf.cast(tf.abs(dy) >= kth, dy.dtype), None


def _keep_top_k_forward(values, k):
    return values


@tf.custom_gradient
def keep_top_k(values, k):
    outputs = _keep_top_k_forward(values, k)

    def grad(*dys):
        op = types.SimpleNamespace(inputs=[values, k])
        return _keep_top_k_grad(op, *dys)

    return outputs, grad
