"""A TF1 name TF2 lacks, used as a value rather than called (`reuse=tf.AUTO_REUSE`), in the
function holding the override: it takes its tf.compat.v1 spelling like a called one, and the
safety net reads `tf.compat.v1.AUTO_REUSE` as TF1's `tf.AUTO_REUSE` (the very object)."""
import random

import tensorflow as tf
from tensorflow.python.framework import ops


def domain_head(x, alpha=1.0):
    with tf.variable_scope("domain", reuse=tf.AUTO_REUSE):
        grad_name = "RevGrad%d" % random.randint(1, 1000)

        @ops.RegisterGradient(grad_name)
        def _reverse_gradient(op, grad):
            return [tf.negative(grad) * alpha]

        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": grad_name}):
            y = tf.identity(x)
        return tf.tanh(y)
