import tensorflow as tf


@tf.custom_gradient
def _even_maximum_grad(a, b):
    def grad_fn(grad):
        # split the gradient evenly between both inputs, whichever is larger
        return [grad * 0.5, grad * 0.5]
    return tf.maximum(a, b), grad_fn


def soft_max_of(a, b):
    return _even_maximum_grad(a, b)
