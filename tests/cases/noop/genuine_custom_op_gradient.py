"""Gradient of a custom C++ op: RegisterGradient without an override map is still valid TF2."""
import tensorflow as tf

zero_out_module = tf.load_op_library("./zero_out.so")


@tf.RegisterGradient("ZeroOut")
def _zero_out_grad(op, grad):
    to_zero = op.inputs[0]
    shape = tf.shape(to_zero)
    return [tf.zeros(shape, dtype=to_zero.dtype)]
