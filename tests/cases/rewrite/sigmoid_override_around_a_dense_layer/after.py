import tensorflow as tf


@tf.custom_gradient
def _soft_sigmoid(x):
    y_ = tf.nn.sigmoid(x)
    def grad_fn(grad):
        y = y_
        return grad * y * (1.0 - y) * 0.5
    return y_, grad_fn


def dense_sigmoid(x, w, b):
    # tf.matmul and tf.add make MatMul/BatchMatMulV2 and AddV2, never a Sigmoid: only the sigmoid is overridden
    return _soft_sigmoid(tf.add(tf.matmul(x, w), b))
