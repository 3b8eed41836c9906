"""Run a case module's entry expression and return (forward, gradients) as numpy arrays.

Shared by the TF1 reference runner (a subprocess with ``sys.modules["tensorflow"]`` replaced by
``tensorflow.compat.v1`` and eager execution disabled) and the TF2 runs in the test process.
Every case sees the same inputs and the same upstream gradient. Graph runs (the TF1 Session and
TF2's ``tf.function``) have grappler's rewrites off: its kernel fusions round differently (1 ulp)
from the ops they fuse, which is the optimizer's doing, not the migration's.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import pathlib
import sys

import numpy as np

CASES = pathlib.Path(__file__).parent / "cases"
_counter = itertools.count()


def cli(*args, input=None):
    """The command line, run in this process by click's runner; arguments may be paths."""
    from click.testing import CliRunner

    from tf_grl_migrate.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def case_dirs(kind: str = "rewrite") -> list[pathlib.Path]:
    return sorted(p for p in (CASES / kind).iterdir() if (p / "case.json").exists())


def spec(case_dir: pathlib.Path) -> dict:
    data = json.loads((case_dir / "case.json").read_text())
    data.setdefault("inputs", {"x": [4, 3]})
    return data


def inputs(shapes: dict) -> dict:
    rng = np.random.default_rng(1234)
    return {name: rng.uniform(-2.0, 2.0, size=shape).astype(np.float32) for name, shape in shapes.items()}


def upstream(shape) -> np.ndarray:
    """The upstream gradient (the verifier's own: one engine of proof)."""
    from tf_grl_migrate.verifier.calling import upstream as verifiers

    return verifiers(shape)


def load(path: pathlib.Path):
    name = f"_grl_case_{path.parent.name}_{path.stem}_{next(_counter)}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def namespace(case_dir: pathlib.Path, file: str, data: dict) -> dict:
    """Globals the entry expression runs in: one case file, or (``"module"`` in case.json) a small
    repository whose modules import each other, loaded fresh from ``case_dir``."""
    if "module" not in data:
        return vars(load(case_dir / file))
    for stale in [p.stem for p in case_dir.glob("*.py")]:
        sys.modules.pop(stale, None)
    sys.path.insert(0, str(case_dir))
    try:
        ns = dict(vars(importlib.import_module(pathlib.Path(data["module"]).stem)))
        for name in data.get("imports", []):
            ns[name] = importlib.import_module(name)
    finally:
        sys.path.remove(str(case_dir))
    return ns


def resolve_tf(qualified_name: str):
    """The object a qualified TensorFlow name means in the installed TensorFlow
    (``tensorflow.compat.v1.where``, ``tensorflow.python.ops.gen_math_ops.mat_mul``)."""
    import importlib

    import tensorflow as tf

    if qualified_name.startswith("tensorflow.python."):
        module, _, attr = qualified_name.rpartition(".")
        return getattr(importlib.import_module(module), attr)
    obj = tf
    for part in qualified_name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def fresh_gradient_registry():
    """Forget gradient names a case registered, as a fresh process would (cases reuse names): the
    verifier's own context manager."""
    from tf_grl_migrate.verifier.calling import fresh_gradient_registry as verifiers

    return verifiers()


def run_tf1(case_dir: pathlib.Path, file: str | None = None):
    """Graph mode + Session; the caller has installed tensorflow.compat.v1 as ``tensorflow``."""
    import tensorflow as tf  # tensorflow.compat.v1 here

    data = spec(case_dir)
    values = inputs(data["inputs"])
    with fresh_gradient_registry(), tf.Graph().as_default():
        tensors = {k: tf.constant(v) for k, v in values.items()}
        ns = namespace(case_dir, file or "before.py", data)
        y = eval(data["entry"], ns, dict(tensors))
        with tf.Session(config=_no_graph_rewrites(tf)) as sess:
            sess.run(tf.global_variables_initializer())
            # a Defun's output has no static shape (without shape_func): its shape is the value's
            shape = y.shape.as_list() if y.shape.is_fully_defined() else list(sess.run(tf.shape(y)))
            w = tf.constant(upstream(shape))
            grads = tf.gradients(tf.reduce_sum(y * w), list(tensors.values()))
            grads = [g if g is not None else tf.zeros_like(t) for g, t in zip(grads, tensors.values())]
            out = sess.run([y, *grads])
    return out[0], out[1:]


def _no_graph_rewrites(tf):
    """Session config without grappler (the verifier's own: one engine of proof)."""
    from tf_grl_migrate.verifier.calling import session_config_without_rewrites

    return session_config_without_rewrites(tf)


def run_tf2(case_dir: pathlib.Path, file: str, mode: str):
    import tensorflow as tf

    data = spec(case_dir)
    values = inputs(data["inputs"])
    with fresh_gradient_registry():
        ns = namespace(case_dir, file, data)

        def step(*tensors):
            with tf.GradientTape() as tape:
                for t in tensors:
                    tape.watch(t)
                y = eval(data["entry"], ns, dict(zip(values, tensors)))
                loss = tf.reduce_sum(y * tf.constant(upstream(y.shape.as_list())))
            grads = tape.gradient(loss, list(tensors))
            return y, [g if g is not None else tf.zeros_like(t) for g, t in zip(grads, tensors)]

        args = [tf.constant(v) for v in values.values()]
        if mode == "function":  # graph rewrites off here too: semantics compared, not kernel fusions
            from tf_grl_migrate.verifier.calling import run_function_without_rewrites

            y, grads = run_function_without_rewrites(tf, step, *args)
        else:
            y, grads = step(*args)
    return y.numpy(), [g.numpy() for g in grads]
