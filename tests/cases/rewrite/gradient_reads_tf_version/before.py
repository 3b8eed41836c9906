import tensorflow as tf


class FlipGradientBuilder(object):
    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, l=1.0):
        grad_name = "FlipGradient%d" % self.num_calls

        @tf.RegisterGradient(grad_name)
        def _flip_gradients(op, grad):
            # copies that still support TensorFlow before 1.0 read the version
            if tf.__version__.startswith("0."):
                return [tf.neg(grad) * l]
            return [tf.negative(grad) * l]

        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": grad_name}):
            y = tf.identity(x)

        self.num_calls += 1
        return y


flip_gradient = FlipGradientBuilder()
