"""An explainer that keeps its graph in an attribute and enters its map later, by hand
(DeepExplain's shape): the graph is looked up where the object is made."""
import tensorflow as tf


@tf.RegisterGradient("ExplainGuidedRelu")
def _guided_relu(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0, grad.dtype)


class Explainer(object):
    def __init__(self, graph=None, session=tf.get_default_session()):
        self.graph = tf.get_default_graph() if graph is None else graph
        self.session = session
        self.override = self.graph.gradient_override_map({"Relu": "ExplainGuidedRelu"})

    def __enter__(self):
        self.override.__enter__()
        return self

    def __exit__(self, *exc):
        self.override.__exit__(*exc)


def saliency_model(x):
    with Explainer():
        return tf.nn.relu(x * 2.0 - 1.0) * 3.0
