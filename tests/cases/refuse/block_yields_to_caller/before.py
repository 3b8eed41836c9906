"""Context managers that enter an override and hand control to their caller's `with` body."""
import contextlib

import tensorflow as tf


@tf.RegisterGradient("GuidedReluCM")
def _guided_relu(op, grad):
    positive = tf.cast(op.outputs[0] > 0.0, grad.dtype)
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * positive


@contextlib.contextmanager
def guided_relu():
    g = tf.get_default_graph()
    with g.gradient_override_map({"Relu": "GuidedReluCM"}):
        yield


@contextlib.contextmanager
def straight_through_sign():
    with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
        yield tf.sign


def delegating():
    with tf.get_default_graph().gradient_override_map({"Round": "Identity"}):
        yield from straight_through_sign()
