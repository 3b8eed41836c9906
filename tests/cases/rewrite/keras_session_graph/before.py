import tensorflow as tf
from tensorflow.python.keras import backend as K


def flip_gradient(x, l=1.0):
    grad_name = "FlipKeras%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    with K.get_session().graph.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
