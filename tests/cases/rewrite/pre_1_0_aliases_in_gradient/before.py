"""A 2016 DANN copy: the gradient is written with names TensorFlow removed in 1.0."""
import tensorflow as tf


class FlipGradientBuilder(object):
    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, l=1.0):
        grad_name = "FlipGradientOld%d" % self.num_calls

        @tf.RegisterGradient(grad_name)
        def _flip_gradients(op, grad):
            return [tf.mul(tf.neg(grad), l)]

        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": grad_name}):
            y = tf.identity(x)

        self.num_calls += 1
        return y


flip_gradient = FlipGradientBuilder()


@tf.RegisterGradient("ShrinkGradOld")
def _shrink(op, grad):
    return tf.sub(grad, tf.select(grad > 0.0, 0.5 * grad, tf.zeros_like(grad)))


def shrink(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ShrinkGradOld"}):
        return tf.identity(x)


def entry(x):
    return shrink(flip_gradient(x, 0.3))
