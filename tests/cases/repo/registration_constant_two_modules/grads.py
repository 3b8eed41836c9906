"""Gradient registrations shared by the model."""
import tensorflow as tf

REVERSE_NAME = "ReverseHalfRepo"


@tf.RegisterGradient(REVERSE_NAME)
def _reverse_half(op, grad):
    return -0.5 * grad
