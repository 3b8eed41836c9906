"""Docs: in TF1 you would write `with g.gradient_override_map({"Identity": name})`."""
import tensorflow as tf

# with g.gradient_override_map({"Identity": "FlipGradient"}):  (old way)
HELP = 'use tf.custom_gradient instead of graph.gradient_override_map({"Identity": ...})'


def describe():
    return "gradient_override_map is ignored in eager mode"
