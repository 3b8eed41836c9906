import tensorflow as tf


@tf.RegisterGradient("IdentityFirstOfTwo")
def _identity_first_of_two_grad(op, grad):
    """Gradient for either bound if `gradient == 'identity'`."""
    del op  # unused
    return [grad, None]


@tf.RegisterGradient("UpperBoundTowards")
def _upper_bound_grad(op, grad):
    inputs, bound = op.inputs
    pass_through_if = tf.logical_or(inputs <= bound, grad > 0)
    return [tf.cast(pass_through_if, grad.dtype) * grad, None]


@tf.RegisterGradient("LowerBoundTowards")
def _lower_bound_grad(op, grad):
    inputs, bound = op.inputs
    pass_through_if = tf.logical_or(inputs >= bound, grad < 0)
    return [tf.cast(pass_through_if, grad.dtype) * grad, None]


def upper_bound(inputs, bound, gradient="identity_if_towards", name="UpperBound"):
    """Like tf.minimum, with a helpful gradient where inputs > bound."""
    try:
        gradient = {
            "identity_if_towards": "UpperBoundTowards",
            "identity": "IdentityFirstOfTwo",
            "disconnected": None,
        }[gradient]
    except KeyError:
        raise ValueError("Invalid value for `gradient`: '{}'.".format(gradient))
    if gradient:
        with tf.get_default_graph().gradient_override_map({"Minimum": gradient}):
            return tf.minimum(inputs, bound, name=name)
    return tf.minimum(inputs, bound, name=name)


def lower_bound(inputs, bound, gradient="identity_if_towards"):
    """Like tf.maximum, with a helpful gradient where inputs < bound."""
    gradient = "LowerBoundTowards" if gradient == "identity_if_towards" else gradient
    try:
        gradient = {"identity": "IdentityFirstOfTwo", "LowerBoundTowards": "LowerBoundTowards"}[gradient]
    except KeyError:
        raise ValueError(gradient)
    with tf.get_default_graph().gradient_override_map({"Maximum": gradient}):
        return tf.maximum(inputs, bound, name="LowerBound")


def bounded(x, z):
    return (upper_bound(x, 0.5) + lower_bound(x, z, gradient="identity")
            + upper_bound(z, 0.0, gradient="disconnected") + lower_bound(z, -0.25) * 2.0)
