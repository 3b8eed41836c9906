"""A TF1 name TF2 lacks, used as a value rather than called (`reuse=tf.AUTO_REUSE`), in the
function holding the override: it takes its tf.compat.v1 spelling like a called one, and the
safety net reads `tf.compat.v1.AUTO_REUSE` as TF1's `tf.AUTO_REUSE` (the very object)."""
import random

import tensorflow as tf
from tensorflow.python.framework import ops


def domain_head(x, alpha=1.0):
    with tf.compat.v1.variable_scope("domain", reuse=tf.compat.v1.AUTO_REUSE):
        @tf.custom_gradient
        def _reverse_gradient(x):
            def grad_fn(grad):
                return [tf.negative(grad) * alpha]
            return tf.identity(x), grad_fn

        y = _reverse_gradient(x)
        return tf.tanh(y)
