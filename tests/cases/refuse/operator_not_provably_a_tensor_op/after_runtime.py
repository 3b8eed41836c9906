import numpy as np
import tensorflow as tf
import tf_grl_migrate


def scaled(a, b):
    # neither operand is known to be a tensor: `*` may be numpy's, which makes no Mul op at all
    with tf_grl_migrate.gradient_override_map({"Mul": "Add"}):
        return a * b


def accumulated(x, w):
    # augmented assignment: the rewrite cannot keep its in-place meaning
    with tf_grl_migrate.gradient_override_map({"Mul": "Add"}):
        x *= tf.sign(w)
    return x


def divided(x, w):
    with tf_grl_migrate.gradient_override_map({"RealDiv": "Add"}):
        return tf.sign(x) / w


def sign_with_add_gradient(x):
    # Add's gradient reads two inputs; Sign has one: TF1 failed when it took this gradient
    with tf.get_default_graph().gradient_override_map({"Sign": "Add"}):
        return tf.sign(x)


@tf.RegisterGradient("FirstOnly")
def _first_only(op, grad):
    return [grad, tf.zeros_like(op.inputs[1])]


def shifted(x, w):
    # one registration for the `-` operator and for tf.multiply: it would have to be a maker
    with tf_grl_migrate.gradient_override_map({"Sub": "FirstOnly", "Mul": "FirstOnly"}):
        return tf.multiply(x, w) - tf.sign(w)


def keep_numpy(x):
    return np.sign(x) * 2.0
