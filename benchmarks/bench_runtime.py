"""Runtime shim cost, measured interleaved in one process against baselines from the same run.

(a) a tf.function training step of a small domain-adversarial MLP with flip_gradient vs the same
    step with tf.identity in its place (target: within 2%);
(b) eager per-call cost of flip_gradient under a tape vs tf.identity and vs the minimal one-line
    tf.custom_gradient version, with the same kind of lambda (target: within 1.15x of minimal).

    python benchmarks/bench_runtime.py [--rounds N]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

from tf_grl_migrate import flip_gradient


def minimal_flip(x, l):
    @tf.custom_gradient
    def _flip(x):
        return tf.identity(x), lambda dy: -l * dy

    return _flip(x)


def make_step(reverse):
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.normal(size=(64, 128)).astype(np.float32))
    w2 = tf.Variable(rng.normal(size=(128, 128)).astype(np.float32))
    wl = tf.Variable(rng.normal(size=(128, 10)).astype(np.float32))
    wd = tf.Variable(rng.normal(size=(128, 1)).astype(np.float32))
    lam = tf.Variable(0.5)
    opt_vars = [w1, w2, wl, wd]

    @tf.function
    def step(x, y, d):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.relu(x @ w1) @ w2)
            label_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, h @ wl))
            dom = reverse(h, lam) @ wd
            dom_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(d, dom))
            loss = label_loss + dom_loss
        grads = tape.gradient(loss, opt_vars)
        for v, g in zip(opt_vars, grads):
            v.assign_sub(0.001 * g)
        return loss

    return step


def timeit(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def interleaved(candidates, rounds, n):
    samples = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples[name].append(timeit(fn, n))
    return {name: statistics.median(v) for name, v in samples.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=(256, 64)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, size=(256,)).astype(np.int32))
    d = tf.constant(rng.integers(0, 2, size=(256, 1)).astype(np.float32))

    steps = {"identity": make_step(lambda h, lam: tf.identity(h)), "flip_gradient": make_step(flip_gradient)}
    for s in steps.values():
        s(x, y, d)  # trace
    a = interleaved({k: (lambda s=s: s(x, y, d)) for k, s in steps.items()}, args.rounds, 50)
    print("(a) tf.function DANN training step, median seconds/step")
    for k, v in a.items():
        print(f"    {k:15s} {v * 1e3:8.3f} ms")
    print(f"    ratio flip_gradient / identity = {a['flip_gradient'] / a['identity']:.3f}  (target <= 1.02)")

    t = tf.constant(rng.normal(size=(32, 32)).astype(np.float32))

    def under_tape(fn):
        def call():
            with tf.GradientTape() as tape:
                tape.watch(t)
                fn(t)
        return call

    lam_var = tf.Variable(0.5)
    b = interleaved(
        {
            "identity": under_tape(lambda v: tf.identity(v)),
            "minimal(float)": under_tape(lambda v: minimal_flip(v, 0.5)),
            "flip(float)": under_tape(lambda v: flip_gradient(v, 0.5)),
            "minimal(var)": under_tape(lambda v: minimal_flip(v, lam_var)),
            "flip(var)": under_tape(lambda v: flip_gradient(v, lam_var)),
        },
        args.rounds,
        300,
    )
    print("(b) eager per call under a GradientTape, median microseconds/call")
    for k, v in b.items():
        print(f"    {k:15s} {v * 1e6:8.1f} us")
    print(f"    ratio flip / minimal, float lambda    = {b['flip(float)'] / b['minimal(float)']:.3f}  (target <= 1.15)")
    print(f"    ratio flip / minimal, Variable lambda = {b['flip(var)'] / b['minimal(var)']:.3f}  (target <= 1.15)")
    print(f"    ratio flip(float) / identity          = {b['flip(float)'] / b['identity']:.3f}")


if __name__ == "__main__":
    main()
