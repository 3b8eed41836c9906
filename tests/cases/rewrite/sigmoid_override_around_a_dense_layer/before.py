import tensorflow as tf


@tf.RegisterGradient("SoftSigmoidDense")
def _soft_sigmoid(op, grad):
    y = op.outputs[0]
    return grad * y * (1.0 - y) * 0.5


def dense_sigmoid(x, w, b):
    # tf.matmul and tf.add make MatMul/BatchMatMulV2 and AddV2, never a Sigmoid: only the sigmoid is overridden
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sigmoid": "SoftSigmoidDense"}):
        return tf.nn.sigmoid(tf.add(tf.matmul(x, w), b))
