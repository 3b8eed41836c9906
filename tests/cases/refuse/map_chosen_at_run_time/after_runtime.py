"""The caller names the modifier; the registration function it picks registers that name first
(keras-vis's shape): which gradient the map gives is known only at run time."""
import tensorflow as tf
import tf_grl_migrate


def _register_guided(name):
    try:
        @tf.RegisterGradient(name)
        def _guided(op, grad):
            gate = tf.cast(op.outputs[0] > 0.0, grad.dtype)
            return gate * tf.cast(grad > 0.0, grad.dtype) * grad
    except KeyError:  # an earlier call registered it
        pass


def _register_rectified(name):
    try:
        @tf.RegisterGradient(name)
        def _rectified(op, grad):
            return tf.cast(grad > 0.0, grad.dtype) * grad
    except KeyError:
        pass


_MODIFIERS = {"guided": _register_guided, "rectified": _register_rectified}


def modified(x, modifier, net):
    _MODIFIERS[modifier](modifier)
    with tf_grl_migrate.gradient_override_map({"Relu": modifier}):
        return net(x)
