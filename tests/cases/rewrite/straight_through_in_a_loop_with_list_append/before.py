import tensorflow as tf


def quantize_all(ws, bits=2):
    """Quantize every tensor of a list with a straight-through rounding estimator."""
    g = tf.get_default_graph()
    levels = float(2 ** bits)  # a power of two: the division is exact in every mode
    out = []
    for w in ws:
        with g.gradient_override_map({"Round": "Identity"}):
            if len(out) > 100:
                print("many tensors")
            out.append(tf.round(w * levels) / levels)
    return out


def entry(x):
    a, b = quantize_all([x, x * 0.5])
    return a + 2.0 * b
