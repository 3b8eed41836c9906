import tensorflow as tf


def quantize_all(ws, bits=2):
    """Quantize every tensor of a list with a straight-through rounding estimator."""
    levels = float(2 ** bits)  # a power of two: the division is exact in every mode
    out = []
    for w in ws:
        @tf.custom_gradient
        def _round_straight_through(x):
            def grad_fn(dy):
                return dy
            return tf.round(x), grad_fn
        if len(out) > 100:
            print("many tensors")
        out.append(_round_straight_through(w * levels) / levels)
    return out


def entry(x):
    a, b = quantize_all([x, x * 0.5])
    return a + 2.0 * b
