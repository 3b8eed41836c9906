import tensorflow as tf
from tensorflow.python.framework import function


def _grad(op, dy):
    return -dy


@function.Defun(tf.float32, python_grad_func=_grad)
def flip(x):
    return tf.identity(x)


def register(graph):
    flip.add_to_graph(graph)
    return flip.name
