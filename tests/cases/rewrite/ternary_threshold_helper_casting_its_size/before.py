import tensorflow as tf


def _threshold(x):
    """0.7 times the mean magnitude (TWN): the size is cast to float, which makes no Sign op."""
    total = tf.reduce_sum(tf.abs(x))
    t = tf.math.divide(total, tf.cast(tf.size(x), tf.float32))
    return tf.math.scalar_mul(0.7, t)


def ternary(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": "Identity"}):
        t = _threshold(x)
        return tf.sign(tf.add(tf.sign(tf.add(x, t)), tf.sign(tf.add(x, -t))))
