import tensorflow as tf

from tf_grl_migrate import FlipGradientBuilder


flip_gradient = FlipGradientBuilder()
