import tensorflow as tf

import grads


def domain_features(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grads.REVERSE_NAME}):
        y = tf.identity(x, name="reversed")
    return tf.tanh(y) * 2.0
