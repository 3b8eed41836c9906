import tensorflow as tf


def ternarize(x, scale, thresh=0.05):
    """Trained ternary quantisation: sign, masked, and scaled per column."""
    thre_x = tf.stop_gradient(tf.reduce_max(tf.abs(x)) * thresh)
    mask_z = tf.where((x < thre_x) & (x > -thre_x), tf.zeros_like(x), tf.ones_like(x))

    # straight-through sign; the product passes its gradient on as a sum would
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.sign(x), grad_fn
    @tf.custom_gradient
    def _mul_add_gradient(a, b):
        def grad_fn(dy):
            sa, sb = tf.shape(a), tf.shape(b)
            ra, rb = tf.raw_ops.BroadcastGradientArgs(s0=sa, s1=sb)
            return tf.reshape(tf.reduce_sum(dy, ra), sa), tf.reshape(tf.reduce_sum(dy, rb), sb)
        return a * b, grad_fn
    w = _mul_add_gradient(_sign_straight_through(x), tf.stop_gradient(mask_z))
    w = (_mul_add_gradient(_sign_straight_through(x), scale)) - 1.0
    return w
