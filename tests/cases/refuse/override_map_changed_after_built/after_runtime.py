import tensorflow as tf
import tf_grl_migrate


def binarize_subscript(x):
    mapping = {}
    mapping["Sign"] = "Identity"
    with tf_grl_migrate.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_update(x):
    mapping = {"Round": "Identity"}
    mapping.update({"Sign": "Identity"})
    with tf_grl_migrate.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_setdefault(x):
    mapping = {}
    mapping.setdefault("Sign", "Identity")
    with tf_grl_migrate.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_loop(x, ops=("Sign", "Round")):
    mapping = {}
    for op_type in ops:
        mapping[op_type] = "Identity"
    with tf_grl_migrate.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_shared(x, register):
    mapping = {}
    register(mapping)
    with tf_grl_migrate.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_dict_call(x):
    mapping = dict(Sign="Identity")
    with tf_grl_migrate.gradient_override_map(mapping):
        return tf.sign(x)
