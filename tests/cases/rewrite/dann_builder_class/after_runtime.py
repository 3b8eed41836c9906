from tf_grl_migrate import FlipGradientBuilder


flip_gradient = FlipGradientBuilder()
