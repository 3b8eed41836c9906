import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("SharedFlip")
def _shared_flip(op, grad):
    return [-grad]


def flip(x):
    with tf_grl_migrate.gradient_override_map({"Identity": "SharedFlip"}):
        return tf.identity(x)


def flip_features(x, net):
    with tf.get_default_graph().gradient_override_map({"Identity": "SharedFlip"}):
        return net(x)
