"""A Keras model's forward pass inside ``tf_grl_migrate.gradient_override_map`` against the same
pass outside it, eagerly, min of N rounds each, taken in turns (target, issue #23: <= 1.5x); and
the forward pass with its gradient (a gradient function's first eager call is traced into a graph,
as TF1 ran it, to see that it runs alike eagerly; issue #29: no target, the cost is reported).

    python benchmarks/bench_override_map.py [--rounds 30] [--batch 64]
"""

import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np
import tensorflow as tf

from tf_grl_migrate import gradient_override_map


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    model = tf.keras.Sequential([tf.keras.layers.Conv2D(16, 3, activation="relu"),
                                 tf.keras.layers.Conv2D(16, 3, activation="relu"), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
    x = tf.constant(np.random.default_rng(0).normal(size=(args.batch, 28, 28, 3)).astype(np.float32))
    tf.RegisterGradient("BenchGuided")(lambda op, grad: grad * tf.cast(op.outputs[0] > 0, grad.dtype))
    model(x)
    outside, inside, plain, mapped = [], [], [], []
    for _ in range(args.rounds):
        t = time.perf_counter()
        with tf.GradientTape() as tape:
            tape.watch(x)
            model(x)
        outside.append(time.perf_counter() - t)
        t = time.perf_counter()
        with tf.GradientTape() as tape:
            tape.watch(x)
            with gradient_override_map({"Relu": "BenchGuided"}):
                model(x)
        inside.append(time.perf_counter() - t)
        t = time.perf_counter()
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = model(x)
        tape.gradient(y, x)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        with tf.GradientTape() as tape:
            tape.watch(x)
            with gradient_override_map({"Relu": "BenchGuided"}):
                y = model(x)
        tape.gradient(y, x)
        mapped.append(time.perf_counter() - t)
    print(f"forward outside the block: {min(outside) * 1e3:.2f} ms, inside: {min(inside) * 1e3:.2f} ms "
          f"(min of {args.rounds}): {min(inside) / min(outside):.2f}x (target <= 1.5x)")
    print(
        f"forward and gradient outside the block: {min(plain) * 1e3:.2f} ms, inside: {min(mapped) * 1e3:.2f} ms: "
        f"{min(mapped) / min(plain):.2f}x (the gradient function traced once into a graph: it makes no py_func, "
        "so it runs eagerly after)"
    )


if __name__ == "__main__":
    main()
