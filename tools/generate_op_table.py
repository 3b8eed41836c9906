"""Generate tf_grl_migrate/knowledge/_tf_op_table.json (what TensorFlow's callables create, found by tracing)
and tf_grl_migrate/knowledge/_tf_api_names.txt (the names TF2 has).

For every public callable of ``tf``, ``tf.math``, ``tf.nn``, ``tf.linalg``, ``tf.random``, their ``tf.compat.v1``
twins, and the ``*_ops`` / ``gen_*_ops`` modules legacy code imports, the callable is called in a
fresh graph on float32 placeholders (one per required positional parameter, 1 to 3 of them),
once with rank-2 and once with rank-3 inputs, and the op types it created are recorded. Nothing
is guessed from names. A callable that cannot be traced that way, because a required parameter is
no tensor (``tf.cast``'s dtype, ``tf.nn.conv2d``'s strides and padding), is traced with values for
the parameters ``ARGUMENTS`` names (by the names TensorFlow's signatures give them; every variant
listed there, on rank 2, 3 and 4 inputs): its entry says ``argued``, its ``ops`` are those of every
variant and rank, and it is never wrappable. Any other callable has no entry.

Per entry (keyed by the qualified name the migrator resolves, e.g. ``tensorflow.nn.relu``,
``tensorflow.compat.v1.where``, ``tensorflow.python.ops.gen_math_ops.sign``):
  ``inputs``  tensor inputs given (the required positional parameters),
  ``ops``     the op types created on rank-2 inputs (sorted, with repeats),
  ``stable``  the same op types on rank-3 inputs, or rank 3 rejected (``tf.matmul`` is not stable:
              MatMul on rank 2, BatchMatMulV2 on rank 3; then ``ops_rank3`` holds the rank-3 ones),
  ``direct``  exactly one op, fed by the inputs in order (the migrator can wrap such a call),
  ``name``    it takes ``name=``,
  ``tensor``  it returned one Tensor (so ``a - call(...)`` runs Tensor's operator).
A callable whose one required parameter is ``shape`` (``tf.random_uniform``, ``tf.zeros``) and
that float inputs cannot trace is traced on an int32 shape vector instead; its entry says
``shape_only`` (what it makes given only its shape) and is never wrappable (``direct`` false).
And ``operators``: the op type each of Python's arithmetic operators makes on two float32 tensors
(``"a * b": "Mul"``, ``"-a": "Neg"``), keyed as Python spells them.
And ``op_types``: every op type registered with TensorFlow (the keys an override map can name and
``tf_grl_migrate.gradient_override_map`` accepts), read from TensorFlow's own op registry.
And, in the names file: every public name under ``tf`` and ``tf.compat.v1`` (two levels of submodules) and
in those ``*_ops`` modules, for the check that moved gradient code only uses names TF2 has.
And, in the Keras names file: every public name of ``keras.layers``, ``keras.models`` and
``keras.backend`` (Keras 3, the one TF >= 2.16 installs) and of their ``tf.keras`` twins, for the
respelling of a migrated Keras 2 layer module (``from keras.engine import Layer``).

    python tools/generate_op_table.py            # rewrite the table (with the pinned TensorFlow)
    python tools/generate_op_table.py --check    # exit 1 if the committed table differs
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import logging
import os
import pathlib
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "tf_grl_migrate" / "knowledge" / "_tf_op_table.json"
NAMES = ROOT / "tf_grl_migrate" / "knowledge" / "_tf_api_names.txt"
KERAS_NAMES = ROOT / "tf_grl_migrate" / "knowledge" / "_keras_names.txt"
KERAS_MODULES = ("layers", "models", "backend")  # where a Keras 2 layer module's names live in Keras 3
OPS_MODULES = ("array_ops", "math_ops", "nn_ops", "nn_impl", "clip_ops", "gen_array_ops", "gen_math_ops", "gen_nn_ops")


def _roots(tf):
    roots = {}
    for prefix in ("", "compat.v1."):
        for sub in ("", "math", "nn", "linalg", "random"):
            dotted = (prefix + sub).rstrip(".")
            obj = tf
            for part in filter(None, dotted.split(".")):
                obj = getattr(obj, part)
            roots["tensorflow" + ("." + dotted if dotted else "")] = obj
    for name in OPS_MODULES:
        roots["tensorflow.python.ops." + name] = importlib.import_module("tensorflow.python.ops." + name)
    return roots


def _required_positional(fn):
    """The names of ``fn``'s required positional parameters (None where it has no signature), and
    whether it takes ``name=``."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None, False
    required = [p.name for p in params
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return required, any(p.name == "name" for p in params)


def _trace(tf, fn, k, shape, dtype=None):
    graph = tf.Graph()
    with graph.as_default():
        inputs = [tf.compat.v1.placeholder(dtype or tf.float32, shape) for _ in range(k)]
        result = fn(*inputs)
    made = [op for op in graph.get_operations() if op.type != "Placeholder"]
    direct = len(made) == 1 and [t.op for t in made[0].inputs] == [t.op for t in inputs]
    return sorted(op.type for op in made), direct, isinstance(result, tf.Tensor)


# What a required parameter that is not a tensor takes when a callable is traced with its arguments
# (``tf.cast``'s dtype, ``tf.reshape``'s shape, ``tf.nn.conv2d``'s strides and padding), by the name
# TensorFlow's signatures give it; ``rank`` is the rank of the tensor inputs. A list is variants:
# the callable is traced with each one and the op types of all of them are recorded.
ARGUMENTS = {
    "dtype": lambda tf, rank: [tf.float32, tf.float64, tf.float16, tf.int32, tf.int64, tf.bool, tf.uint8],
    "axis": lambda tf, rank: [0, -1], "dim": lambda tf, rank: [0], "axes": lambda tf, rank: [[0]],
    "shape": lambda tf, rank: [[-1], [3] * rank], "dims": lambda tf, rank: [[3, 3]],
    "multiples": lambda tf, rank: [[2] * rank], "paddings": lambda tf, rank: [[[1, 1]] * rank],
    "begin": lambda tf, rank: [[0] * rank], "size": lambda tf, rank: [[1] * rank],
    "perm": lambda tf, rank: [list(reversed(range(rank)))],
    "indices": lambda tf, rank: [_int_vector([0, 1])], "depth": lambda tf, rank: [3],
    "strides": lambda tf, rank: [[1] * rank], "ksize": lambda tf, rank: [[1] * rank],
    "padding": lambda tf, rank: ["SAME", "VALID"], "scalar": lambda tf, rank: [2.0],
    "num_or_size_splits": lambda tf, rank: [1, 3],
    "rate": lambda tf, rank: [0.5], "keep_prob": lambda tf, rank: [0.5],
    "variance_epsilon": lambda tf, rank: [1e-3], "start": lambda tf, rank: [3],
    "values": lambda tf, rank: [2],  # a list of that many tensor inputs (tf.concat)
}
_TENSOR_LISTS = ("values",)
# tensor inputs of their own shape: a convolution's filters (height, width, in and out channels), a bias
_SHAPED = {"filters": lambda rank: [1] * (rank - 2) + [3, 3], "filter": lambda rank: [1] * (rank - 2) + [3, 3],
           "bias": lambda rank: [3]}
ARGUED_SHAPES = ([3, 3], [2, 3, 3], [1, 3, 3, 3])  # ranks 2, 3 and 4 (convolutions and pools take 4)


def _int_vector(values):
    import numpy as np

    return np.array(values, dtype=np.int32)  # a constant of the graph it is used in


def _arguments(tf, names, values, shape):
    """The arguments of one traced call (in the default graph), and the placeholders among them."""
    args, inputs = [], []
    for name, value in zip(names, values):
        if name in _TENSOR_LISTS:
            value = [tf.compat.v1.placeholder(tf.float32, shape) for _ in range(value)]
            inputs += value
        elif name not in ARGUMENTS:
            value = tf.compat.v1.placeholder(tf.float32, _SHAPED[name](len(shape)) if name in _SHAPED else shape)
            inputs.append(value)
        args.append(value)
    return args, inputs


def _argued_entry(tf, fn, names, takes_name):
    """``fn``'s entry when its non-tensor parameters (``names`` the required ones) take values from
    ``ARGUMENTS`` and the others float32 placeholders, over every variant and the ranks of
    ``ARGUED_SHAPES``: never wrappable (``direct`` false), its ``ops`` those of every variant that
    traced (``argued``: what ``ops_created`` reads as all it can make); None where no required
    parameter is in ``ARGUMENTS`` or nothing traced."""
    import itertools

    if len(names) > 6 or not any(n in ARGUMENTS or n in _SHAPED for n in names):
        return None
    made, tensors, returned = set(), 0, True
    for shape in ARGUED_SHAPES:
        rank = len(shape)
        choices = [ARGUMENTS[n](tf, rank) if n in ARGUMENTS else [None] for n in names]
        for values in itertools.product(*choices):
            graph = tf.Graph()
            try:
                with graph.as_default():
                    args, inputs = _arguments(tf, names, values, shape)
                    result = fn(*args)
            except Exception:  # noqa: BLE001 - not with these values, or not at this rank
                continue
            made |= {op.type for op in graph.get_operations() if op.type != "Placeholder"}
            tensors, returned = len(inputs), returned and isinstance(result, tf.Tensor)
    if not tensors:
        return None
    return {"inputs": tensors, "ops": sorted(made), "stable": True, "direct": False, "name": takes_name,
            "tensor": returned, "argued": True}


# Python's arithmetic operators on tensors, spelled as the source writes them (the migrator keys
# an operator it meets the same way), and the function Python calls for each
OPERATORS = {"a + b": "add", "a - b": "sub", "a * b": "mul", "a / b": "truediv", "a @ b": "matmul",
             "a ** b": "pow", "-a": "neg"}


def _operators(tf) -> dict:
    """The op type each operator makes when it makes exactly one (on rank-2 float32 tensors)."""
    import operator

    made = {}
    for spelling, function in OPERATORS.items():
        graph = tf.Graph()
        with graph.as_default():
            a, b = (tf.compat.v1.placeholder(tf.float32, [3, 3]) for _ in range(2))
            getattr(operator, function)(*((a,) if spelling == "-a" else (a, b)))
        types = [op.type for op in graph.get_operations() if op.type != "Placeholder"]
        if len(types) == 1:
            made[spelling] = types[0]
    return made


def _float_entry(tf, fn, k, takes_name):
    """``fn``'s entry traced on ``k`` float32 placeholders, at rank 2 and rank 3; None where it
    cannot be traced so."""
    try:
        ops2, direct, tensor = _trace(tf, fn, k, [3, 3])
    except Exception:  # noqa: BLE001 - not traceable on float inputs
        return None
    try:
        ops3 = _trace(tf, fn, k, [2, 3, 3])[0]
    except Exception:  # noqa: BLE001 - rank 3 rejected (MatMul): it never creates anything else
        ops3 = ops2
    entry = {"inputs": k, "ops": ops2, "stable": ops3 == ops2, "direct": direct, "name": takes_name, "tensor": tensor}
    if ops3 != ops2:
        entry["ops_rank3"] = ops3
    return entry


def _shape_only_entry(tf, fn, takes_name):
    """The entry of a callable whose one required parameter is ``shape`` (``tf.random_uniform``,
    ``tf.zeros``) and that float inputs cannot trace, traced on an int32 shape vector: what it makes
    given only its shape; None where that fails too."""
    try:
        ops2, _, tensor = _trace(tf, fn, 1, [2], tf.int32)
    except Exception:  # noqa: BLE001
        return None
    return {"inputs": 1, "ops": ops2, "stable": True, "direct": False, "name": takes_name, "tensor": tensor,
            "shape_only": True}


def _api_names(tf):
    names = set()

    def walk(obj, dotted, depth, seen):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        for attr in dir(obj):
            if attr.startswith("_"):
                continue
            names.add(f"{dotted}.{attr}")
            child = getattr(obj, attr, None)
            if depth < 2 and inspect.ismodule(child) and getattr(child, "__name__", "").startswith("tensorflow"):
                walk(child, f"{dotted}.{attr}", depth + 1, seen)

    walk(tf, "tensorflow", 0, set())  # each root its own walk: tf.compat.v1 is also reached inside tf's
    walk(tf.compat.v1, "tensorflow.compat.v1", 0, set())
    for name in OPS_MODULES:  # legacy code imports these directly (gen_nn_ops.relu_grad)
        names.update(
            f"tensorflow.python.ops.{name}.{attr}"
            for attr in dir(importlib.import_module("tensorflow.python.ops." + name))
            if not attr.startswith("__")
        )
    return sorted(names)


def _registered_op_types() -> list:
    """Every op type TensorFlow registered (its C++ op registry, as ``op_def_registry`` reads it),
    but its internal ones (a leading ``_``: no user code makes them, and which of them are registered
    depends on the machine, e.g. ``_CopyFromGpuToHost`` where CUDA libraries are found)."""
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.client import pywrap_tf_session

    ops = op_def_pb2.OpList()
    ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))
    return sorted({op.name for op in ops.op if not op.name.startswith("_")})


def _keras_names(tf) -> list:
    import keras

    names = []
    for root, package in (("keras", keras), ("tensorflow.keras", tf.keras)):
        for module in KERAS_MODULES:
            names += [f"{root}.{module}.{attr}" for attr in dir(getattr(package, module)) if not attr.startswith("_")]
    return [f"# generated by tools/generate_op_table.py from TensorFlow {tf.__version__} and Keras {keras.__version__}",
            *sorted(names)]


def generate() -> tuple[str, str, str]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    entries = {}
    for prefix, module in _roots(tf).items():
        for attr in sorted(dir(module)):
            fn = getattr(module, attr, None)
            if attr.startswith("_") or not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
                continue
            names, takes_name = _required_positional(fn)
            if not names:
                continue
            entry = _float_entry(tf, fn, len(names), takes_name) if len(names) <= 3 else None
            if entry is None and names == ["shape"]:
                entry = _shape_only_entry(tf, fn, takes_name)
            elif entry is None:
                entry = _argued_entry(tf, fn, names, takes_name)
            if entry is not None:
                entries[f"{prefix}.{attr}"] = entry
    data = {"generated_by": "tools/generate_op_table.py", "tensorflow_version": tf.__version__,
            "callables": dict(sorted(entries.items())), "operators": _operators(tf),
            "op_types": _registered_op_types()}
    names = [
        f"# generated by tools/generate_op_table.py from TensorFlow {tf.__version__}: public names",
        *_api_names(tf),
    ]
    return (json.dumps(data, indent=0, sort_keys=False) + "\n", "\n".join(names) + "\n",
            "\n".join(_keras_names(tf)) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table differs")
    args = ap.parse_args()
    files = dict(zip((TABLE, NAMES, KERAS_NAMES), generate()))
    if args.check:
        stale = [p.name for p, text in files.items() if not p.exists() or p.read_text() != text]
        if stale:
            print(f"{', '.join(stale)} stale: run python tools/generate_op_table.py", file=sys.stderr)
            return 1
        return 0
    for path, text in files.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
