import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("ClipFlipTrace")
def _flip(op, grad):
    return -grad


def reversed_and_clipped(x):
    # Identity ops come from many TF paths a single trace does not show: not cleared by the trace
    with tf.get_default_graph().gradient_override_map({"Identity": "ClipFlipTrace"}):
        return tf.identity(tf.clip_by_value(x, -1.0, 1.0))


@tf.RegisterGradient("MaxFeedbackTrace")
def _max_grad(op, grad):
    return [grad, None]


def clipped(x):
    # clip_by_value itself makes a Maximum op, among others: not one call the tool can wrap
    with tf_grl_migrate.gradient_override_map({"Maximum": "MaxFeedbackTrace"}):
        return tf.clip_by_value(x, -1.0, 1.0)
