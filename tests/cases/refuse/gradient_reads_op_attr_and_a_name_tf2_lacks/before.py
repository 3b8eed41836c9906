import tensorflow as tf


@tf.RegisterGradient("CastAwareFlatten")
def _cast_aware_flatten(op, grad):
    dtype = op.get_attr("T")
    return [tf.cast(tf.contrib.layers.flatten(grad), dtype)]


def model(x):
    with tf.get_default_graph().gradient_override_map({"Relu": "CastAwareFlatten"}):
        return tf.nn.relu(x) + tf.nn.relu(x + 1.0)
