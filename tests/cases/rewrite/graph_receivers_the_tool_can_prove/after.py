import tensorflow as tf


@tf.custom_gradient
def _half(x):
    def grad_fn(grad):
        return grad * 0.5
    return tf.identity(x), grad_fn


def by_branch(x, plain=False):
    if plain:
        @tf.custom_gradient
        def _sign_straight_through(x):
            def grad_fn(dy):
                return dy
            return tf.sign(x), grad_fn
        y = _sign_straight_through(x)
    else:
        y = _half(x)
    return y


class Binarizer:
    def __init__(self):
        self.G = tf.compat.v1.get_default_graph()  # as tf_upgrade_v2 leaves it

    def binarize(self, x):
        @tf.custom_gradient
        def _sign_straight_through_(x):
            def grad_fn(dy):
                return dy
            return tf.sign(x), grad_fn
        return _sign_straight_through_(x)


def through_tensor(x):
    @tf.custom_gradient
    def _round_straight_through(x):
        def grad_fn(dy):
            return dy
        return tf.round(x), grad_fn
    return _round_straight_through(x)


def entry(x):
    return by_branch(x) + Binarizer().binarize(x) * through_tensor(x) + by_branch(x, plain=True)
