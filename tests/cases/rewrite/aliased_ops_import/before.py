import tensorflow as tf
from tensorflow.python.framework import ops as tf_ops


def flip_gradient(x, l=1.0):
    grad_name = "FlipAliased%d" % id(x)

    @tf_ops.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    g = tf_ops.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):
        return tf.identity(x)
