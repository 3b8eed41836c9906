import tensorflow as tf


def _identity_first_of_two_grad(forward, name=None):
    @tf.custom_gradient
    def wrapped(a, b):
        def grad_fn(grad):
            """Gradient for either bound if `gradient == 'identity'`."""
            return [grad, None]
        return forward(a, b, name=name), grad_fn
    return wrapped


def _upper_bound_grad(forward, name=None):
    @tf.custom_gradient
    def wrapped(a, b):
        def grad_fn(grad):
            inputs, bound = [a, b]
            pass_through_if = tf.logical_or(inputs <= bound, grad > 0)
            return [tf.cast(pass_through_if, grad.dtype) * grad, None]
        return forward(a, b, name=name), grad_fn
    return wrapped


def _lower_bound_grad(forward, name=None):
    @tf.custom_gradient
    def wrapped(a, b):
        def grad_fn(grad):
            inputs, bound = [a, b]
            pass_through_if = tf.logical_or(inputs >= bound, grad < 0)
            return [tf.cast(pass_through_if, grad.dtype) * grad, None]
        return forward(a, b, name=name), grad_fn
    return wrapped


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
        return {"UpperBoundTowards": _upper_bound_grad, "IdentityFirstOfTwo": _identity_first_of_two_grad}[gradient](tf.minimum, name=name)(inputs, bound)
    return tf.minimum(inputs, bound, name=name)


def lower_bound(inputs, bound, gradient="identity_if_towards"):
    """Like tf.maximum, with a helpful gradient where inputs < bound."""
    gradient = "LowerBoundTowards" if gradient == "identity_if_towards" else gradient
    try:
        gradient = {"identity": "IdentityFirstOfTwo", "LowerBoundTowards": "LowerBoundTowards"}[gradient]
    except KeyError:
        raise ValueError(gradient)
    return {"IdentityFirstOfTwo": _identity_first_of_two_grad, "LowerBoundTowards": _lower_bound_grad}[gradient](tf.maximum, name="LowerBound")(inputs, bound)


def bounded(x, z):
    return (upper_bound(x, 0.5) + lower_bound(x, z, gradient="identity")
            + upper_bound(z, 0.0, gradient="disconnected") + lower_bound(z, -0.25) * 2.0)
