import tensorflow as tf
import tf_grl_migrate


@tf.RegisterGradient("FixedFeedbackRank")
def _fixed_feedback(op, grad):
    return [grad, tf.matmul(tf.transpose(op.inputs[0]), grad)]


def dense_fa(x, w):
    # tf.matmul makes MatMul for matrices and BatchMatMulV2 for batches: TF1 overrode only the first
    with tf_grl_migrate.gradient_override_map({"MatMul": "FixedFeedbackRank"}):
        return tf.matmul(x, w)
