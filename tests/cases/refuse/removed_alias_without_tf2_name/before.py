import tensorflow as tf


@tf.RegisterGradient("BandedGrad")
def _banded(op, grad):
    return tf.batch_band_part(grad, 0, -1)


def banded(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "BandedGrad"}):
        return tf.identity(x)
