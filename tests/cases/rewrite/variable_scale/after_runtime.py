import tensorflow as tf
import tf_grl_migrate

# the DANN schedule assigns this between steps
LAMBDA = tf.Variable(0.5, trainable=False, name="grl_lambda")


def flip_gradient(x):
    y = tf_grl_migrate.flip_gradient(x, LAMBDA)
    return y
