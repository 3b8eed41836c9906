from GR import *


def features(x):
    h = tf.tanh(x) * 2.0  # `tf` is GR's, handed on by the star-import
    return flip(tf.identity(h, name=GRAD_NAME + "_input"))
