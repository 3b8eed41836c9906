"""A context manager that enters a caller's graph and, when asked, a caller's map (GEDI's shape):
the graph is a parameter, known to be one because it is entered with as_default() beside the map."""
from contextlib import contextmanager

import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("GuidedReluCaller")
def _guided_relu(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0, grad.dtype)


@contextmanager
def using_context(graph, sess, override_map=None):
    if override_map is None:
        with graph.as_default(), sess.as_default():
            yield
    else:
        with graph.as_default(), sess.as_default(), tf_grl_migrate.gradient_override_map(override_map, graph=graph):
            yield


def load_guided(graph, sess, load_model):
    with using_context(graph, sess, {"Relu": "GuidedReluCaller"}):
        return load_model()
