import tensorflow as tf


class ConvLayer:
    def __init__(self, clip=True):
        self.clip = clip

    def get_output(self, x):
        self.output = tf.nn.relu(x)
        if self.clip:
            # gradient constraint
            g = tf.get_default_graph()
            with g.gradient_override_map({"Identity": "CustomClipGradInClass"}):
                self.output = tf.identity(self.output, name="Identity")
        return self.output

    @tf.RegisterGradient("CustomClipGradInClass")
    def _clip_grad(unused_op, grad):
        return tf.clip_by_value(grad, -0.5, 0.5)


def build(x):
    return ConvLayer().get_output(x * 3.0)
