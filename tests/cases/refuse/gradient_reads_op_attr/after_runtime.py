import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("CastAwareFlip")
def _cast_aware_flip(op, grad):
    dtype = op.get_attr("T")
    return [tf.cast(-grad, dtype)]


def flip(x):
    with tf_grl_migrate.gradient_override_map({"Identity": "CastAwareFlip"}):
        return tf.identity(x)
