import tensorflow as tf

# the DANN schedule assigns this between steps
LAMBDA = tf.Variable(0.5, trainable=False, name="grl_lambda")


def flip_gradient(x):
    @tf.custom_gradient
    def _flip(x):
        def grad_fn(grad):
            return [tf.negative(grad) * LAMBDA]
        return tf.identity(x), grad_fn

    y = _flip(x)
    return y
