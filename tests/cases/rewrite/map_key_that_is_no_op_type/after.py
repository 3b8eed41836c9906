import tensorflow as tf


def steps(x):
    # the map spells the op type in lower case ('Floor' is the type): TF1 overrode nothing here
    y = tf.floor(x * 3.0)
    return y * x


def hard_tanh(x):
    @tf.custom_gradient
    def _sign_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.sign(x), grad_fn
    return _sign_straight_through(tf.clip_by_value(x, -1.0, 1.0))
