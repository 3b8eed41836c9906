import tensorflow as tf

from grads import GUIDED_NAME
from layers import clipped


def guided(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Relu": GUIDED_NAME}):
        return tf.nn.relu(x)


def model(x, z):
    return guided(x * 2.0 - 1.0) + clipped(z * 3.0)
