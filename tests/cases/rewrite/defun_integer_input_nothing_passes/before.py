"""meProp-style: the gradient keeps the k largest entries of each row; k is declared int32 and no
call in the module passes it."""
import tensorflow as tf
from tensorflow.python.framework import function


def _keep_top_k_grad(op, dy):
    k = op.inputs[1]
    kth = tf.reduce_min(tf.nn.top_k(tf.abs(dy), k)[0], axis=1, keepdims=True)
    return dy * tf.cast(tf.abs(dy) >= kth, dy.dtype), None


@function.Defun(tf.float32, tf.int32, python_grad_func=_keep_top_k_grad)
def keep_top_k(values, k):
    return values
