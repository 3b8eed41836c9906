import uuid

import tensorflow as tf
import tf_grl_migrate


def register_under_fresh_name(fn):
    # the registered function arrives as an argument: nothing here says what it computes
    name = "grad_" + uuid.uuid4().hex
    tf.RegisterGradient(name)(fn)
    return name


def with_gradient(x, grad_fn):
    name = register_under_fresh_name(grad_fn)
    with tf_grl_migrate.gradient_override_map({"Identity": name}):
        return tf.identity(x)
