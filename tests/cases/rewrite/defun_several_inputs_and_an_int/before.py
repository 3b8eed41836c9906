"""meProp-style: a matmul whose gradient keeps only the k largest entries of each row of dy."""
import tensorflow as tf
from tensorflow.python.framework import function


def _top_k_mask(values, k):
    kth = tf.reduce_min(tf.nn.top_k(tf.abs(values), k)[0], axis=1, keepdims=True)
    return tf.cast(tf.abs(values) >= kth, values.dtype)


def MatMulTopKGrad(op, grad):
    a = op.inputs[0]
    b = op.inputs[1]
    grad = grad * _top_k_mask(grad, op.inputs[2])
    grad_a = tf.matmul(grad, b, transpose_b=True)
    grad_b = tf.matmul(a, grad, transpose_a=True)
    return grad_a, grad_b, None


@function.Defun(tf.float32, tf.float32, tf.int32, python_grad_func=MatMulTopKGrad)
def MatMulTopK(a, b, k):
    return tf.matmul(a, b)


def dense(x, w):
    return MatMulTopK(x, w, 2)
