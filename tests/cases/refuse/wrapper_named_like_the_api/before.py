import tensorflow as tf
from lucid.misc.gradient_override import gradient_override_map
from lucid.misc.gradient_override import gradient_override_map as override


def clipped(x):
    with gradient_override_map({"Identity": "ClipGrad"}):
        return tf.identity(x)


def clipped_alias(x):
    with override({"Sign": "Identity"}):
        return tf.sign(x)


def entered_by_hand(x):
    context = gradient_override_map({"Sign": "Identity"})
    context.__enter__()
    return tf.sign(x)
