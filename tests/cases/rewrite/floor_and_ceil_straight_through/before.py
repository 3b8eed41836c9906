import tensorflow as tf


def fixed_point(x, step=0.25):
    """Floor to a grid forward, identity backward; ceil for the upper bound."""
    g = tf.get_default_graph()
    with g.gradient_override_map({"Floor": "Identity", "Ceil": "Identity"}):
        low = tf.floor(x / step) * step
        high = tf.math.ceil(x / step) * step
    return low + high
