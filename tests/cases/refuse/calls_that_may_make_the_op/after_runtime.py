import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("AbsSignGrad")
def _abs_grad(op, grad):
    return grad * tf.sign(op.inputs[0])


def magnitude(x):
    # the builtin abs() is Tensor.__abs__: it makes the very Abs op the map overrides
    with tf_grl_migrate.gradient_override_map({"Abs": "AbsSignGrad"}):
        return abs(x)


def collect(xs, sink):
    # `sink` is not a list the tool can see: its append may run anything
    with tf_grl_migrate.gradient_override_map({"Sign": "Identity"}):
        for x in xs:
            sink.append(tf.sign(x))
