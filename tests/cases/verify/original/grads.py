"""TF1 code with the shapes the tool knows: reversal, straight-through with clipping, guided
ReLU, a two-input op with two gradients, a plain identity forward."""
import tensorflow as tf

_calls = [0]


def flip_gradient(x, l=1.0):
    name = "VerifyFlip%d" % _calls[0]
    _calls[0] += 1

    @tf.RegisterGradient(name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": name}):
        return tf.identity(x)


@tf.RegisterGradient("VerifyHardTanhSTE")
def _hardtanh_ste(op, grad):
    x = op.inputs[0]
    return grad * tf.cast(tf.abs(x) <= 1.0, grad.dtype)


def binarize(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": "VerifyHardTanhSTE"}):
        return tf.sign(x)


@tf.RegisterGradient("VerifyGuidedRelu")
def _guided_relu(op, grad):
    gate = tf.cast(grad > 0.0, grad.dtype) * tf.cast(op.outputs[0] > 0.0, grad.dtype)
    return grad * gate


def guided_relu(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Relu": "VerifyGuidedRelu"}):
        return tf.nn.relu(x)


@tf.RegisterGradient("VerifyUnevenMax")
def _uneven_max(op, grad):
    return [grad * 0.75, grad * 0.25]


def uneven_max(a, b):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Maximum": "VerifyUnevenMax"}):
        return tf.maximum(a, b)


if __name__ == "__main__":
    raise SystemExit("script code: verification never runs this")
