import tensorflow as tf


def clip_gradient(x, clip_value):
    @tf.custom_gradient
    def _clip(x):
        def grad_fn(grad):
            return [tf.clip_by_value(grad, -clip_value, clip_value)]
        return tf.identity(x), grad_fn

    y = _clip(x)
    return y
