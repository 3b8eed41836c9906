import tensorflow as tf


def straight_through(op, dy):
    """Pass the gradient where the input is within [-1, 1] (BinaryNet's clipped identity)."""
    return dy * tf.cast(tf.abs(op.inputs[0]) <= 1.0, dy.dtype)


def scaled_by_output(op, dy):
    return dy * (1.0 + tf.abs(op.outputs[0])), None
