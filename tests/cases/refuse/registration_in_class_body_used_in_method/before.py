import functools

import tensorflow as tf


class Layer:
    @tf.RegisterGradient("ClipInClass")
    def _clip_grad(unused_op, grad):
        return tf.clip_by_value(grad, -1, 1)


def outside_the_class(x):
    # the class body's function is not visible here (only a method of Layer may call Layer._clip_grad)
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ClipInClass"}):
        y = tf.identity(x)
    return y


@functools.total_ordering
class Decorated:
    # a class decorator may replace the class: `Decorated._clip` may not be this function
    def get_output(self, x):
        with tf.get_default_graph().gradient_override_map({"Identity": "ClipDecorated"}):
            return tf.identity(x)

    @tf.RegisterGradient("ClipDecorated")
    def _clip(unused_op, grad):
        return tf.clip_by_value(grad, -1, 1)

    def __lt__(self, other):
        return False


class Rebound:
    def get_output(self, x):
        with tf.get_default_graph().gradient_override_map({"Identity": "ClipRebound"}):
            return tf.identity(x)

    @tf.RegisterGradient("ClipRebound")
    def _clip(unused_op, grad):
        return tf.clip_by_value(grad, -1, 1)


Rebound = functools.lru_cache(Rebound)


def factory():
    class Local:
        def get_output(self, x):
            with tf.get_default_graph().gradient_override_map({"Identity": "ClipLocal"}):
                return tf.identity(x)

        @tf.RegisterGradient("ClipLocal")
        def _clip(unused_op, grad):
            return tf.clip_by_value(grad, -1, 1)
    return Local
