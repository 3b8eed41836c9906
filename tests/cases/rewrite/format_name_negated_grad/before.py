import tensorflow as tf


class GradientReverser:
    """Reverses gradients on the way back (DANN)."""

    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, hp_lambda=1.0):
        grad_name = "GradientReversal{}".format(self.num_calls)

        @tf.RegisterGradient(grad_name)
        def _reverse(op, grad):
            return -grad * hp_lambda

        with tf.get_default_graph().gradient_override_map({"Identity": grad_name}):
            y = tf.identity(x)
        self.num_calls += 1
        return y


reverse_gradient = GradientReverser()
