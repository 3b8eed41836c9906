import tensorflow as tf


def through_parameter(x, graph):
    with graph.gradient_override_map({"Sign": "Identity"}):
        return tf.sign(x)


class Quantizer:
    def __init__(self, helper):
        self.ctx = helper

    def quantize(self, x):
        with self.ctx.gradient_override_map({"Round": "Identity"}):
            return tf.round(x)


def through_unknown_module(x, helpers):
    with helpers.overrides.gradient_override_map({"Sign": "Identity"}):
        return tf.sign(x)
