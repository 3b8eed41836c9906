import tensorflow as tf

G = tf.get_default_graph()


# DoReFa-style gradient code still written with TF1's keywords
@tf.RegisterGradient("NormalizedGrad")
def _normalized(op, grad):
    scale = tf.reduce_max(tf.abs(grad), [1], keep_dims=True)  # TF2: keepdims
    mean = tf.reduce_mean(grad, reduction_indices=[0], keep_dims=True)  # TF2: axis, keepdims
    return grad / scale - mean


def normalized(x):
    with G.gradient_override_map({"Identity": "NormalizedGrad"}):
        return tf.identity(x)
