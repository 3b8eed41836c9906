import tensorflow as tf
from tensorflow.python.framework import ops

from tf_grl_migrate import FlipGradientBuilder


flip_gradient = FlipGradientBuilder()
