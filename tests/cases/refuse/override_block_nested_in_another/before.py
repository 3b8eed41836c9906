import tensorflow as tf


@tf.RegisterGradient("PassClipped")
def _pass_clipped(op, grad):
    return grad, None


def clipped_through(x):
    # one map per op type, nested: TF1 gave the inner block's ops both maps' gradients
    g = tf.get_default_graph()
    with g.gradient_override_map({"Minimum": "PassClipped"}):
        with g.gradient_override_map({"Maximum": "PassClipped"}):
            return tf.clip_by_value(x * 2.0, -1.0, 1.0)
