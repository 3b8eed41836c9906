"""The name's counter is an attribute set on the function at module level, after its def: the
name goes, the counter and its increment stay; the verifier runs that assignment with the def
(setting an attribute of a plain function runs none of the module's code)."""
import tensorflow as tf


def scaled(x, scale=0.5):
    name = "CounterScale%d" % scaled.calls
    scaled.calls += 1

    @tf.RegisterGradient(name)
    def _scaled_grad(op, grad):
        return grad * scale

    with tf.get_default_graph().gradient_override_map({"Identity": name}):
        return tf.identity(x)


scaled.calls = 0
