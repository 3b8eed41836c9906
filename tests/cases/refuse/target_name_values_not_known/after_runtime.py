import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("ClipGradChosen")
def _clip(op, grad):
    return tf.clip_by_value(grad, -1.0, 1.0)


def by_parameter(x, gradient="ClipGradChosen"):
    # callers outside this file may pass any registered name
    with tf_grl_migrate.gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def maybe_none(x, mode):
    gradient = {"clip": "ClipGradChosen", "none": None}[mode]
    # no `if gradient:` guard: TF1 raised TypeError for None here
    with tf_grl_migrate.gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def unregistered_value(x, mode):
    gradient = {"clip": "ClipGradChosen", "other": "RegisteredElsewhere"}[mode]
    with tf_grl_migrate.gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def computed(x, prefix):
    gradient = prefix + "GradChosen"
    with tf_grl_migrate.gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def rebound_inside(x, mode):
    gradient = "ClipGradChosen"

    def switch():
        nonlocal gradient
        gradient = mode

    switch()
    with tf_grl_migrate.gradient_override_map({"Identity": gradient}):
        return tf.identity(x)



def _private_passed_a_variable(x, gradient="ClipGradChosen"):
    with tf_grl_migrate.gradient_override_map({"Identity": gradient}):
        return tf.identity(x)


def caller(x, name):
    return _private_passed_a_variable(x, name)
