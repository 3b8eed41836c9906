"""The name's counter is an attribute set on the function at module level, after its def: the
name goes, the counter and its increment stay; the verifier runs that assignment with the def
(setting an attribute of a plain function runs none of the module's code)."""
import tensorflow as tf


def scaled(x, scale=0.5):
    scaled.calls += 1

    @tf.custom_gradient
    def _scaled_grad(x):
        def grad_fn(grad):
            return grad * scale
        return tf.identity(x), grad_fn

    return _scaled_grad(x)


scaled.calls = 0
