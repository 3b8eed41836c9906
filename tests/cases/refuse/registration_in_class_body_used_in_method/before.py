import tensorflow as tf


class Layer:
    def get_output(self, x):
        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": "ClipInClass"}):
            y = tf.identity(x)
        return y

    @tf.RegisterGradient("ClipInClass")
    def _clip_grad(unused_op, grad):
        return tf.clip_by_value(grad, -1, 1)
