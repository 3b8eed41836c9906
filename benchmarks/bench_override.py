"""override_gradients vs the usual TF2 guided-backprop recipe, measured in the same run.

Guided-backprop saliency of one small convolutional Keras model, two ways:
  * baseline: the model rebuilt with its ReLUs replaced by a @tf.custom_gradient guided ReLU
    (what TF2 answers online recommend);
  * override_gradients: the ordinary model, the legacy @tf.RegisterGradient("GuidedRelu")
    function unchanged, and the gradient taken inside ``with override_gradients(...)``.
Both eagerly and inside a ``tf.function``; rounds interleaved, medians compared. Also the cost of
entering and leaving the block. Targets: ratio <= 1.05, enter + exit <= 20 us.

    python benchmarks/bench_override.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
import tensorflow as tf

from tf_grl_migrate import override_gradients


@tf.RegisterGradient("GuidedReluBench")
def _guided_relu_grad(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0, grad.dtype)


@tf.custom_gradient
def guided_relu(x):
    y = tf.nn.relu(x)

    def grad(dy):
        return tf.where(dy > 0.0, dy, tf.zeros_like(dy)) * tf.cast(y > 0.0, dy.dtype)

    return y, grad


def build(activation):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((32, 32, 3))
    h = keras.layers.Conv2D(16, 3, padding="same", activation=activation)(inputs)
    h = keras.layers.Conv2D(16, 3, padding="same", activation=activation)(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(32, 3, padding="same", activation=activation)(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    return keras.Model(inputs, keras.layers.Dense(10)(h))


def saliency(model, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = model(x)[:, 3]
    return tape, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    plain, replaced = build("relu"), build(guided_relu)
    replaced.set_weights(plain.get_weights())
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 32, 32, 3)).astype(np.float32))
    mapping = {"Relu": "GuidedReluBench"}

    def eager_override():
        tape, y = saliency(plain, x)
        with override_gradients(mapping):
            return tape.gradient(y, x)

    def eager_replaced():
        tape, y = saliency(replaced, x)
        return tape.gradient(y, x)

    @tf.function
    def traced_plain(x):
        tape, y = saliency(plain, x)
        return tape.gradient(y, x)

    @tf.function
    def traced_replaced(x):
        tape, y = saliency(replaced, x)
        return tape.gradient(y, x)

    def function_override():
        with override_gradients(mapping):
            return traced_plain(x)

    def function_replaced():
        return traced_replaced(x)

    with override_gradients(mapping):  # traced inside the block: the trace keeps the override
        np.testing.assert_allclose(traced_plain(x).numpy(), traced_replaced(x).numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(eager_override().numpy(), eager_replaced().numpy(), rtol=1e-4, atol=1e-6)

    pairs = {"eager": (eager_override, eager_replaced), "tf.function": (function_override, function_replaced)}
    for name, (ours, base) in pairs.items():
        times = {ours: [], base: []}
        for fn in (ours, base, ours, base):  # warm-up
            fn()
        for _ in range(args.rounds):
            for fn in (ours, base) if _ % 2 == 0 else (base, ours):
                start = time.perf_counter()
                fn()
                times[fn].append(time.perf_counter() - start)
        a, b = statistics.median(times[ours]), statistics.median(times[base])
        print(f"{name:12s} override_gradients {a * 1e3:7.2f} ms   replaced activations {b * 1e3:7.2f} ms   "
              f"ratio {a / b:.3f} (target <= 1.05)")

    n = 20000
    start = time.perf_counter()
    for _ in range(n):
        with override_gradients(mapping):
            pass
    per = (time.perf_counter() - start) / n
    print(f"enter + exit of one block: {per * 1e6:.1f} us (target <= 20 us)")


if __name__ == "__main__":
    main()
