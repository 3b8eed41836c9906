from tensorflow.python.framework import ops
from tensorflow.python.ops import array_ops
from tensorflow.python.ops import math_ops


@ops.RegisterGradient("ReverseGradArrayOps")
def _reverse_grad(op, grad):
    return [math_ops.negative(grad) * 0.3]


def reverse(x):
    with ops.get_default_graph().gradient_override_map({"Identity": "ReverseGradArrayOps"}):
        return array_ops.identity(x)
