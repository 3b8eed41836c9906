import tensorflow as tf
import tf_grl_migrate


def encode_reversed(x, encoder, l=1.0):
    grad_name = "FlipEncoder%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    with tf_grl_migrate.gradient_override_map({"Identity": grad_name}):
        h = encoder(x)
    return h
