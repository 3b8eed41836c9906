import tensorflow as tf


class FlipGradientBuilder(object):
    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, l=1.0):
        @tf.custom_gradient
        def _flip_gradients(x):
            def grad_fn(grad):
                # copies that still support TensorFlow before 1.0 read the version
                if tf.__version__.startswith("0."):
                    return [tf.negative(grad) * l]
                return [tf.negative(grad) * l]
            return tf.identity(x), grad_fn

        y = _flip_gradients(x)

        self.num_calls += 1
        return y


flip_gradient = FlipGradientBuilder()
