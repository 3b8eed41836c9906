import tensorflow as tf


@tf.RegisterGradient("NoisyFlip")
def _noisy(op, grad):
    noise = tf.random_uniform(tf.shape(grad), minval=0.9, maxval=1.1)
    return tf.neg(grad) * tf.to_float(noise > 0.0)


def flip(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "NoisyFlip"}):
        return tf.identity(x)


def entry(x):
    return flip(x)
