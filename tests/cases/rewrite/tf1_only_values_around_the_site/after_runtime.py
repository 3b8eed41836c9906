"""A TF1 name TF2 lacks, used as a value rather than called (`reuse=tf.AUTO_REUSE`), in the
function holding the override: it takes its tf.compat.v1 spelling like a called one, and the
safety net reads `tf.compat.v1.AUTO_REUSE` as TF1's `tf.AUTO_REUSE` (the very object)."""
import random

import tensorflow as tf
from tensorflow.python.framework import ops
import tf_grl_migrate


def domain_head(x, alpha=1.0):
    with tf.compat.v1.variable_scope("domain", reuse=tf.compat.v1.AUTO_REUSE):
        y = tf_grl_migrate.flip_gradient(x, alpha)
        return tf.tanh(y)
