import uuid

import tensorflow as tf


def gradient_reversal(features, scale=1.0):
    grad_name = "GRL_" + uuid.uuid4().hex

    @tf.RegisterGradient(grad_name)
    def _grl(op, grad):
        neg = tf.negative(grad)
        neg = neg * scale
        return [neg]

    graph = tf.get_default_graph()
    with graph.gradient_override_map({"Identity": grad_name}):
        features = tf.identity(features)
    return features
