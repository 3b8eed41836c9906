import tensorflow as tf
from tensorflow.python.framework import ops


@tf.RegisterGradient("ClipGradNamed")
def _clip_grad(unused_op, grad):
    return tf.clip_by_value(grad, -0.1, 0.1)


def clipped(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ClipGradNamed"}):
        return tf.identity(x, name="Identity")


@tf.RegisterGradient("ExpClipNamed")
def _exp_clip(op, grad):
    return tf.clip_by_value(grad * op.outputs[0], -0.5, 0.5)


def clipped_exp(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Exp": "ExpClipNamed"}):
        return tf.exp(x, name="Exp")


def binary_round(x):
    # replace the gradient calculation: a straight-through estimator
    graph = tf.get_default_graph()
    with ops.name_scope("BinaryRound") as name:
        with graph.gradient_override_map({"Round": "Identity"}):
            return tf.round(tf.sigmoid(x), name=name)


def entry(x):
    return clipped(x) * 2.0 + clipped_exp(x) + binary_round(x) * x
