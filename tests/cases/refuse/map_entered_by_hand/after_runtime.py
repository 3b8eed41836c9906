"""An explainer object that enters the graph's map by hand (DeepExplain's shape): every Relu
created while it is active gets the explanation gradient, whoever builds the model."""
import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("ExplainRelu")
def _explain_relu(op, grad):
    gate = tf.cast(op.outputs[0] > 0.0, grad.dtype)
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * gate


class Explainer(object):
    def __init__(self):
        self.graph = tf.compat.v1.get_default_graph()
        self.override_context = tf_grl_migrate.gradient_override_map({"Relu": "ExplainRelu"})

    def __enter__(self):
        self.override_context.__enter__()
        return self

    def __exit__(self, *exc):
        self.override_context.__exit__(*exc)
        return False


def explained(x, model):
    with Explainer():
        y = model(x)
    return y
