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
    graph = sess.graph
    operation_name = "ClipGradient-" + str(clip_value)

    if operation_name not in clip_gradient.added_gradients:
        @tf.RegisterGradient(operation_name)
        def clip_gradient_grad(op, grad):
            return tf.clip_by_value(grad, -clip_value, clip_value)

        clip_gradient.added_gradients.add(operation_name)

    with graph.gradient_override_map({"Identity": operation_name}):
        return tf.identity(value)
