import tensorflow as tf


def binarize_subscript(x):
    mapping = {}
    mapping["Sign"] = "Identity"
    g = tf.get_default_graph()
    with g.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_update(x):
    mapping = {"Round": "Identity"}
    mapping.update({"Sign": "Identity"})
    g = tf.get_default_graph()
    with g.gradient_override_map(mapping):
        return tf.sign(x)


def binarize_setdefault(x):
    mapping = {}
    mapping.setdefault("Sign", "Identity")
    with tf.get_default_graph().gradient_override_map(mapping):
        return tf.sign(x)


def binarize_loop(x, ops=("Sign", "Round")):
    mapping = {}
    for op_type in ops:
        mapping[op_type] = "Identity"
    with tf.get_default_graph().gradient_override_map(mapping):
        return tf.sign(x)


def binarize_shared(x, register):
    mapping = {}
    register(mapping)
    with tf.get_default_graph().gradient_override_map(mapping):
        return tf.sign(x)


def binarize_dict_call(x):
    mapping = dict(Sign="Identity")
    with tf.get_default_graph().gradient_override_map(mapping):
        return tf.sign(x)
