"""The one table that knows TensorFlow op types.

For each op type that the migrator can rewrite: the callables that create it (canonical
qualified names, see :func:`canonical`) and the number of tensor inputs its gradient
function receives. ``tests/test_ops_table.py`` traces every callable here in a
``tf.function`` against the installed TensorFlow and asserts the graph holds an op of
exactly that type, and that the callable takes ``name=`` (which the rewrite forwards into the
custom-gradient function). An op type not in this table is refused, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _tf_renames


@dataclass(frozen=True)
class OpType:
    name: str
    arity: int
    callables: tuple[str, ...]


def _op(name: str, arity: int, *callables: str) -> OpType:
    return OpType(name, arity, callables)


OP_TYPES: dict[str, OpType] = {
    op.name: op
    for op in (
        _op("Identity", 1, "tensorflow.identity", "tensorflow.python.ops.array_ops.identity",
            "tensorflow.python.ops.gen_array_ops.identity"),
        _op("Sign", 1, "tensorflow.sign", "tensorflow.math.sign", "tensorflow.python.ops.math_ops.sign",
            "tensorflow.python.ops.gen_math_ops.sign"),
        _op("Round", 1, "tensorflow.round", "tensorflow.math.round", "tensorflow.python.ops.math_ops.round",
            "tensorflow.python.ops.gen_math_ops.round"),
        _op("Floor", 1, "tensorflow.floor", "tensorflow.math.floor", "tensorflow.python.ops.math_ops.floor",
            "tensorflow.python.ops.gen_math_ops.floor"),
        _op("Ceil", 1, "tensorflow.ceil", "tensorflow.math.ceil", "tensorflow.python.ops.math_ops.ceil",
            "tensorflow.python.ops.gen_math_ops.ceil"),
        _op("Relu", 1, "tensorflow.nn.relu", "tensorflow.python.ops.nn_ops.relu",
            "tensorflow.python.ops.gen_nn_ops.relu"),
        _op("Sigmoid", 1, "tensorflow.sigmoid", "tensorflow.nn.sigmoid", "tensorflow.math.sigmoid",
            "tensorflow.python.ops.math_ops.sigmoid",
            "tensorflow.python.ops.gen_math_ops.sigmoid"),
        _op("Tanh", 1, "tensorflow.tanh", "tensorflow.nn.tanh", "tensorflow.math.tanh",
            "tensorflow.python.ops.math_ops.tanh",
            "tensorflow.python.ops.gen_math_ops.tanh"),
        _op("MatMul", 2, "tensorflow.matmul", "tensorflow.linalg.matmul", "tensorflow.python.ops.math_ops.matmul",
            "tensorflow.python.ops.gen_math_ops.mat_mul"),
        _op("Maximum", 2, "tensorflow.maximum", "tensorflow.math.maximum", "tensorflow.python.ops.math_ops.maximum",
            "tensorflow.python.ops.gen_math_ops.maximum"),
        _op("Minimum", 2, "tensorflow.minimum", "tensorflow.math.minimum", "tensorflow.python.ops.math_ops.minimum",
            "tensorflow.python.ops.gen_math_ops.minimum"),
        _op("Exp", 1, "tensorflow.exp", "tensorflow.math.exp", "tensorflow.python.ops.math_ops.exp",
            "tensorflow.python.ops.gen_math_ops.exp"),
    )
}

# canonical callable name -> op type
CALLABLES: dict[str, OpType] = {c: op for op in OP_TYPES.values() for c in op.callables}

# Python operators on tensors and the op type each creates (float tensors).
OPERATOR_OP_TYPES: dict[str, str] = {
    "Add": "AddV2",
    "Subtract": "Sub",
    "Multiply": "Mul",
    "Divide": "RealDiv",
    "MatrixMultiply": "MatMul",
    "Power": "Pow",
    "Minus": "Neg",
}

# Registered-gradient names that TensorFlow itself provides, usable as override targets.
# "Identity" passes the upstream gradient straight through (straight-through estimators).
BUILTIN_TARGETS = frozenset({"Identity"})

# Arithmetic that a gradient reversal body is written with (recognised by --use-runtime).
NEGATIVE = frozenset({"tensorflow.negative", "tensorflow.math.negative", "tensorflow.python.ops.math_ops.negative"})
MULTIPLY = frozenset({"tensorflow.multiply", "tensorflow.math.multiply", "tensorflow.python.ops.math_ops.multiply"})
SCALAR_MUL = frozenset({"tensorflow.scalar_mul", "tensorflow.math.scalar_mul",
                        "tensorflow.python.ops.math_ops.scalar_mul"})

REGISTER_GRADIENT = frozenset({"tensorflow.RegisterGradient", "tensorflow.python.framework.ops.RegisterGradient"})
# Receivers of gradient_override_map besides any `<expr>.graph` (e.g. `K.get_session().graph`).
DEFAULT_GRAPH = frozenset({"tensorflow.get_default_graph", "tensorflow.python.framework.ops.get_default_graph"})
GRAPH_CLASS = frozenset({"tensorflow.Graph", "tensorflow.python.framework.ops.Graph"})

_PREFIXES = ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow._api.v2.compat.v1.")


def removed_alias(qualified_names) -> tuple[str, str | None] | None:
    """For a name TensorFlow 1.0 removed (``tf.neg``): (old name, the TF2 name to write, or None
    when TF2 has no replacement), both without ``tensorflow.``; None for any other name. From
    the generated table (``tools/generate_tf_renames.py``), never from memory."""
    for name in qualified_names:
        name = canonical(name)
        if name.startswith("tensorflow."):
            old = name[len("tensorflow."):]
            if old in _tf_renames.RENAMED:
                return old, _tf_renames.RENAMED[old]
            if old in _tf_renames.GONE:
                return old, None
    return None


def _with_removed_aliases(names: frozenset) -> frozenset:
    """``NEGATIVE`` also knows ``tf.neg``: the names TF 1.0 renamed into the set."""
    return names | {"tensorflow." + old for old, new in _tf_renames.RENAMED.items() if "tensorflow." + new in names}


NEGATIVE = _with_removed_aliases(NEGATIVE)
MULTIPLY = _with_removed_aliases(MULTIPLY)


def canonical(qualified_name: str) -> str:
    """``tensorflow.compat.v1.sign`` -> ``tensorflow.sign``; other names unchanged."""
    for prefix in _PREFIXES:
        if qualified_name.startswith(prefix):
            return "tensorflow." + qualified_name[len(prefix):]
    return qualified_name


def op_type_of_callable(qualified_names) -> OpType | None:
    for name in qualified_names:
        op = CALLABLES.get(canonical(name))
        if op is not None:
            return op
    return None
