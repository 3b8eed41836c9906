import tensorflow as tf


def quarter_steps(x):
    # one map for every quantizer of the model: this block makes no Sign op
    with tf.get_default_graph().gradient_override_map({"Round": "Identity", "Sign": "Identity"}):
        return tf.round(x * 4.0) / 4.0
