import tensorflow as tf

# the DANN schedule assigns this between steps
LAMBDA = tf.Variable(0.5, trainable=False, name="grl_lambda")


def flip_gradient(x):
    grad_name = "FlipVariable%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * LAMBDA]

    with tf.get_default_graph().gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
