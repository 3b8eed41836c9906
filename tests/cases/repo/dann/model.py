"""A DANN head: two reversal points, both through the shared flip_gradient module."""
import tensorflow as tf

from flip_gradient import flip_gradient


def domain_head(features, l):
    # reverse the features for the domain classifier
    reversed_features = flip_gradient(features, l)
    return tf.tanh(reversed_features) * 2.0


def adversarial_loss_input(features):
    return domain_head(features, 0.5) + flip_gradient(features * features, l=0.25)
