import tensorflow as tf


def ternarize(x, scale, thresh=0.05):
    """Trained ternary quantisation: sign, masked, and scaled per column."""
    G = tf.get_default_graph()
    thre_x = tf.stop_gradient(tf.reduce_max(tf.abs(x)) * thresh)
    mask_z = tf.where((x < thre_x) & (x > -thre_x), tf.zeros_like(x), tf.ones_like(x))

    # straight-through sign; the product passes its gradient on as a sum would
    with G.gradient_override_map({"Sign": "Identity", "Mul": "Add"}):
        w = tf.sign(x) * tf.stop_gradient(mask_z)
        w = (tf.sign(x) * scale) - 1.0
    return w
