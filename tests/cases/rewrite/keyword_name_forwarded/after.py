import tensorflow as tf
from tensorflow.python.framework import ops


@tf.custom_gradient
def _clip_grad(x):
    def grad_fn(grad):
        return tf.clip_by_value(grad, -0.1, 0.1)
    return tf.identity(x, name="Identity"), grad_fn


def clipped(x):
    return _clip_grad(x)


@tf.custom_gradient
def _exp_clip(x):
    y = tf.exp(x, name="Exp")
    def grad_fn(grad):
        return tf.clip_by_value(grad * y, -0.5, 0.5)
    return y, grad_fn


def clipped_exp(x):
    return _exp_clip(x)


def binary_round(x):
    # replace the gradient calculation: a straight-through estimator
    with ops.name_scope("BinaryRound") as name:
        @tf.custom_gradient
        def _round_straight_through(x):
            def grad_fn(dy):
                return dy
            return tf.round(x, name=name), grad_fn
        return _round_straight_through(tf.sigmoid(x))


def entry(x):
    return clipped(x) * 2.0 + clipped_exp(x) + binary_round(x) * x
