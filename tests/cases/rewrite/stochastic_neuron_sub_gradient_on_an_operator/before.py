import tensorflow as tf


def binary_step(x):
    # straight-through step: Ceil passes the gradient on, the Sub sends it to its first input only
    g = tf.get_default_graph()
    with g.gradient_override_map({"Ceil": "Identity", "Sub": "FirstInputOnly"}):
        return tf.ceil(x * 2.0 - tf.ones(tf.shape(x)))


@tf.RegisterGradient("FirstInputOnly")
def _first_input_only(op, grad):
    return [grad, tf.zeros(tf.shape(op.inputs[1]))]
