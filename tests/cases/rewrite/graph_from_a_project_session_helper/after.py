import tensorflow as tf

_OPENED = []


class _Session:
    """A project's shared session holder: opening one does more than find the graph."""

    @property
    def graph(self):
        return tf.get_default_graph()


def session():
    _OPENED.append(1)
    return _Session()


def clip_gradient(value, clip_value):
    # registered once per clip value, remembered on the function itself
    if not hasattr(clip_gradient, "added_gradients"):
        clip_gradient.added_gradients = set()

    sess = session()

    @tf.custom_gradient
    def clip_gradient_grad(x):
        def grad_fn(grad):
            return tf.clip_by_value(grad, -clip_value, clip_value)
        return tf.identity(x), grad_fn

    return clip_gradient_grad(value)
