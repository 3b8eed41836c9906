"""The one place that knows TensorFlow: op types, the callables that create them, renamed names.
Why it is built so: docs/design.md, "knowledge/ops.py"."""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any

from . import _tf_renames

if TYPE_CHECKING:
    from collections.abc import Iterable

    Names = Iterable[str]  # a callable's qualified names (facts.qn): how the module may spell it

_HERE = os.path.dirname(os.path.abspath(__file__))


class _Frozen:
    """A small immutable record compared by its fields: what ``@dataclass(frozen=True)`` gives,
    without importing dataclasses (and inspect) on the CLI's start-up path."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, *values: Any) -> None:
        if len(values) != len(self.__slots__):  # zip(strict=True) is Python 3.10+; this runs on 3.9
            raise TypeError(f"{type(self).__name__} takes {len(self.__slots__)} values, got {len(values)}")
        for name, value in zip(self.__slots__, values):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Frozen) and type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._fields()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._fields()!r}"


class OpType(_Frozen):
    """An op type the migrator can wrap: its name, its number of tensor inputs, the callables
    that create exactly one of it."""

    __slots__ = ("name", "arity", "callables")
    name: str
    arity: int
    callables: tuple


@functools.cache
def _document() -> dict:
    """The generated op table, read once per process."""
    import json

    with open(os.path.join(_HERE, "_tf_op_table.json"), encoding="utf-8") as handle:
        return json.load(handle)


def table() -> dict:
    """qualified callable name -> {inputs, ops, stable, direct, name} (the generated table)."""
    return _document()["callables"]


def tf_version() -> str:
    """The TensorFlow the table was generated from."""
    return _document()["tensorflow_version"]


def _lookup(mapping: dict, qualified_names: Names) -> Any:
    """The value for the first name found as spelt (``tensorflow.compat.v1.where`` may differ from
    ``tensorflow.where``), else canonically (compat.v1 dropped), else, for a TF1 name TF2 lacks
    (``tf.ceil``, ``tf.random_uniform``), as its ``tf.compat.v1`` twin: the very object TF1 had;
    None when none is there."""
    for name in qualified_names:
        found = mapping.get(name) or mapping.get(canonical(name))
        if found is None and (rest := tf1_only(name)) is not None:
            found = mapping.get("tensorflow.compat.v1." + rest)
        if found is not None:
            return found
    return None


def tf1_only(qualified_name: str) -> str | None:
    """For ``tensorflow.X`` that TF2 lacks but ``tf.compat.v1.X`` has (``tensorflow.ceil``): ``X``."""
    if not qualified_name.startswith("tensorflow.") or qualified_name.startswith(("tensorflow.compat.",
                                                                                  "tensorflow.python.")):
        return None
    if exists_in_tf2(qualified_name):
        return None
    rest = qualified_name[len("tensorflow."):]
    return rest if exists_in_tf2("tensorflow.compat.v1." + rest) else None


HIDDEN_OP_MODULES = ("tensorflow.python.ops.gen_array_ops", "tensorflow.python.ops.gen_math_ops",
                     "tensorflow.python.ops.gen_nn_ops")


def hidden_op_wrapper(qualified_name: str) -> str | None:
    """TensorFlow up to 1.4 generated the wrapper of a hidden op with a leading underscore
    (``gen_nn_ops._relu_grad``, copied into guided-backprop code everywhere); later ones generate
    it without (``gen_nn_ops.relu_grad``): the same op, the same signature, both generated from its
    op definition. For such a name TF2 lacks: the wrapper's TF2 name (``relu_grad``), if TF2 has it."""
    module, _, attr = qualified_name.rpartition(".")
    if module not in HIDDEN_OP_MODULES or not attr.startswith("_") or attr.startswith("__"):
        return None
    if exists_in_tf2(qualified_name) or not exists_in_tf2(f"{module}.{attr[1:]}"):
        return None
    return attr[1:]


@functools.cache
def _op_types() -> tuple[dict, dict]:
    """(op type -> OpType, callable -> OpType) for the op types a call can be wrapped for: a
    callable creates exactly one op of that type from its inputs, for any rank, and takes
    ``name=``. An op type created with different input counts is left out (ambiguous)."""
    by_type: dict[str, dict[int, list[str]]] = {}
    for name, entry in table().items():
        if entry["direct"] and entry["stable"] and entry["name"]:
            by_type.setdefault(entry["ops"][0], {}).setdefault(entry["inputs"], []).append(name)
    types = {op: OpType(op, arity, tuple(callables))
             for op, arities in by_type.items() if len(arities) == 1 for arity, callables in arities.items()}
    return types, {c: op for op in types.values() for c in op.callables}


def __getattr__(name: str) -> dict:  # OP_TYPES / CALLABLES: derived from the generated table on first use
    if name == "OP_TYPES":
        return _op_types()[0]
    if name == "CALLABLES":
        return _op_types()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def op_type_names() -> frozenset:
    """Every op type some callable of the table creates: names TensorFlow registers gradients for
    itself (an override target spelt like one is TensorFlow's gradient, not a user registration)."""
    return frozenset(op for entry in table().values() for op in (*entry["ops"], *entry.get("ops_rank3", ())))


def _entry(qualified_names: Names) -> dict | None:
    return _lookup(table(), qualified_names)


def ops_created(qualified_names: Names) -> frozenset | None:
    """The op types a callable creates on rank-2 or rank-3 inputs (``tf.matmul``: MatMul and
    BatchMatMulV2), or, for one traced with its arguments (``argued``: ``tf.cast`` with every
    dtype, ``tf.nn.conv2d`` with strides and padding), on any of the values and ranks tried; None
    for a callable the tool cannot see into."""
    entry = _entry(qualified_names)
    if entry is None:
        return None
    return frozenset(entry["ops"]) | frozenset(entry.get("ops_rank3", ()))


def returns_tensor(qualified_names: Names) -> bool:
    """Whether the callable returned one Tensor when traced (so `a - call(...)` is Tensor's `-`)."""
    entry = _entry(qualified_names)
    return bool(entry and entry.get("tensor"))


def shape_only(qualified_names: Names) -> bool:
    """Whether the table knows the callable only as called with its shape (``tf.random_uniform``):
    its other arguments (``maxval=``, ``dtype=``) may make other ops."""
    entry = _entry(qualified_names)
    return bool(entry and entry.get("shape_only"))


def describe_call(qualified_names: Names, mapped: Iterable[str]) -> tuple[str, dict[str, Any]]:
    """Why a call in an override block stops the rewrite: GRL101's message (its key in the table
    of codes) and the fields it reads. The call is one the op table does not know ("calls_unseen"),
    makes other ops by input rank ("calls_by_rank"), makes a mapped op among others
    ("calls_among_others"), or is recorded as making none, but TensorFlow may add Identity ops
    ("calls_untraced")."""
    shown = ", ".join(repr(k) for k in sorted(mapped))
    entry = _entry(qualified_names)
    if entry is None:
        return "calls_unseen", {"mapped": shown}
    if not entry["stable"] and set(entry["ops"] + entry.get("ops_rank3", [])) & set(mapped):
        rank2, rank3 = (", ".join(sorted(set(entry.get(k, entry["ops"])))) for k in ("ops", "ops_rank3"))
        return "calls_by_rank", {"rank2": rank2, "rank3": rank3}
    hit = sorted(set(entry["ops"]) & set(mapped))
    if hit:
        return "calls_among_others", {"hit": ", ".join(repr(k) for k in hit)}
    return "calls_untraced", {"mapped": shown}


@functools.cache
def api_names() -> frozenset:
    with open(os.path.join(_HERE, "_tf_api_names.txt"), encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle if line.strip() and not line.startswith("#"))


@functools.cache
def keras_names() -> frozenset:
    """``keras.layers.Layer``, ``tensorflow.keras.backend.set_value``, ...: the names Keras 3 and
    TF2's ``tf.keras`` have in their layers, models and backend modules."""
    with open(os.path.join(_HERE, "_keras_names.txt"), encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle if line.strip() and not line.startswith("#"))


def keras_backend_lacks(attr: str) -> str | None:
    """What becomes of ``K.<attr>`` (``K`` Keras 2's ``keras.backend``) under Keras 3: None where
    Keras 3's ``keras.backend`` has it; ``"tf.keras"`` where only TF2's ``tf.keras.backend`` does
    (the import moves there); ``"gone"`` where neither has it."""
    names = keras_names()
    if f"keras.backend.{attr}" in names:
        return None
    return "tf.keras" if f"tensorflow.keras.backend.{attr}" in names else "gone"


def exists_in_tf2(qualified_name: str) -> bool:
    """Whether a ``tensorflow...`` name exists in the pinned TF2, as far as the names file covers
    it: the public API three submodules deep (``tensorflow.a.b.c``; ``tensorflow.compat.v1.a.b.c``)
    and the ``*_ops`` modules legacy code imports; a longer name is judged by that prefix, and a
    name in an internal module the file does not cover is taken to exist (never a refusal on a guess).
    The file lists modules' public names: an attribute of an object it lists (``tf.float32.is_floating``,
    ``tf.Tensor.shape``) or a module's own dunder (``tf.__version__``) is a real object's
    attribute, not an API name, and is taken to exist."""
    parts = qualified_name.split(".")
    if any(p.startswith("__") and p.endswith("__") for p in parts[1:]):
        return True  # a module's or object's own attribute (tf.__version__ in DANN copies of pre-1.0 code)
    if qualified_name.startswith("tensorflow.python."):
        if ".".join(parts[:4]) not in _covered_internal_modules():
            return True
        depth = 5
    else:
        depth = 6 if qualified_name.startswith("tensorflow.compat.v1.") else 4
    names = api_names()
    for end in range(depth if depth == 5 else 2, min(depth, len(parts)) + 1):  # tensorflow.python.ops.m: the module
        prefix = ".".join(parts[:end])
        if prefix not in names:
            return False
        if end < len(parts) and prefix not in _api_modules():
            return True  # an attribute of an object the file lists, not of a module
    return ".".join(parts[:depth]) in names


@functools.cache
def _api_modules() -> frozenset:
    """The names in the names file that have names under them (modules)."""
    return frozenset(n.rsplit(".", 1)[0] for n in api_names())


@functools.cache
def _covered_internal_modules() -> frozenset:
    return frozenset(".".join(n.split(".")[:4]) for n in api_names() if n.startswith("tensorflow.python.ops."))


def operator_op_type(spelling: str) -> str | None:
    """The op type a Python operator makes on float tensors, from the generated table: keyed as
    Python spells it, ``"a * b"`` (``x *= y`` too), ``"-a"``; None for one that makes no single op."""
    return _document()["operators"].get(spelling)


# The operators' op types a block may have wrapped in a custom-gradient function: ``*`` and ``-``
# make the same op in TF 1.x and 2.x; ``+`` made Add before TF 1.15 and AddV2 since, so only a map
# naming AddV2 has ``+`` wrapped (one naming Add is the user's to settle: GRL116).
WRAPPABLE_OPERATORS = frozenset({"Mul", "Sub", "AddV2"})


class BuiltinGradient(_Frozen):
    """A gradient TensorFlow registers for one of its own op types, borrowed as an override target
    (``{"Sign": "Identity"}``, ``{"Mul": "Add"}``): TF1 called that function with the overridden
    op, so the migrated code computes the same math from the op's inputs. ``arity`` is how many
    inputs it reads; ``body`` is the grad_fn body, formatted with ``tf`` (the module's TensorFlow
    name), ``dy`` and ``inputs`` (the custom-gradient function's parameters)."""

    __slots__ = ("name", "arity", "body")
    name: str
    arity: int
    body: str

    def grad_body(self, tf: str, dy: str, inputs: list[str]) -> str:
        return self.body.format(tf=tf, dy=dy, a=inputs[0], b=inputs[-1])


_PASS_THROUGH = "return {dy}"
# TensorFlow's _AddGrad (math_grad.py): the upstream gradient to both inputs, summed over the axes
# each was broadcast along and reshaped to its shape.
_ADD_GRAD = ("sa, sb = {tf}.shape({a}), {tf}.shape({b})\n"
             "ra, rb = {tf}.raw_ops.BroadcastGradientArgs(s0=sa, s1=sb)\n"
             "return {tf}.reshape({tf}.reduce_sum({dy}, ra), sa), {tf}.reshape({tf}.reduce_sum({dy}, rb), sb)")

# Gradients TensorFlow registers under these op-type names that an override map may name as its
# target: "Identity" passes the upstream gradient straight through (straight-through estimators);
# "Add"/"AddV2" pass it to both inputs, broadcast-reduced (ternary nets' {"Mul": "Add"}). Each one's
# emitted math is proven against TF1 by the differential tests (tests/cases/rewrite).
BUILTIN_GRADIENTS: dict[str, BuiltinGradient] = {
    "Identity": BuiltinGradient("Identity", 1, _PASS_THROUGH),
    "Add": BuiltinGradient("Add", 2, _ADD_GRAD),
    "AddV2": BuiltinGradient("AddV2", 2, _ADD_GRAD),
}

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


def removed_alias(qualified_names: Names) -> tuple[str, str | None] | None:
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


def keyword_changes(qualified_names: Names, positional: int, keywords: list[str]) -> tuple[dict, str | None]:
    """For a call of ``tensorflow.X`` that stays ``tf.X`` in TF2, what its arguments become there,
    from tf_upgrade_v2's own tables (generated into ``_tf_renames``): ({positional index or TF1
    keyword: TF2 keyword}, None), or ({}, why) when an argument has no TF2 keyword."""
    name = next((canonical(q)[len("tensorflow."):] for q in qualified_names
                 if canonical(q).startswith("tensorflow.")), None)
    if name is None:
        return {}, None
    table: dict = _tf_renames.KEYWORDS.get(name, {})
    order: list = _tf_renames.REORDERS.get(name, [])
    changes: dict = {}
    moved = False
    for i in range(positional):
        old = order[i] if i < len(order) else None
        if old is None:
            if moved:  # a same-position argument after a moved one: no order to write it in
                return {}, f"tf.{name}'s positional arguments are in another order in TF2"
            continue
        moved = True
        new = table.get(old, old)
        if new is None:
            return {}, f"tf.{name}'s argument `{old}` (position {i + 1}) has no TF2 keyword"
        changes[i] = new
    for keyword in keywords:
        if keyword in table:
            if table[keyword] is None:
                return {}, f"tf.{name}'s keyword `{keyword}` is gone in TF2"
            changes[keyword] = table[keyword]
    return changes, None


def _with_removed_aliases(names: frozenset) -> frozenset:
    """``NEGATIVE`` also knows ``tf.neg``: the names TF 1.0 renamed into the set."""
    return names | {"tensorflow." + old for old, new in _tf_renames.RENAMED.items() if "tensorflow." + new in names}


NEGATIVE = _with_removed_aliases(NEGATIVE)
MULTIPLY = _with_removed_aliases(MULTIPLY)


# Calls a removed assignment may hold: its value only named the override or found its graph, and
# dropping the call loses nothing but that (a random draw or a counter step spent on a name). A
# call of anything else (a project's own `session()`) may do more, so its assignment stays.
QUIET_CALLS = frozenset({
    *DEFAULT_GRAPH, "tensorflow.get_default_session", "tensorflow.python.framework.ops.get_default_session",
    "tensorflow.Session", "tensorflow.python.client.session.Session",  # a plain session (not Interactive:
    # that one installs itself as the default session)
    "tensorflow.keras.backend.get_session", "tensorflow.python.keras.backend.get_session",
    "keras.backend.get_session", "keras.backend.tensorflow_backend.get_session",
    "builtins.str", "builtins.int", "builtins.float", "builtins.repr", "builtins.len", "builtins.id",
    "builtins.format", "builtins.hex", "builtins.abs", "builtins.round", "builtins.next", "builtins.set",
    "builtins.list", "builtins.dict", "builtins.tuple", "builtins.frozenset", "itertools.count",
    "random.randint", "random.random", "random.getrandbits", "random.randrange", "random.choice",
    "uuid.uuid1", "uuid.uuid4", "time.time",
})
QUIET_METHODS = frozenset({"format", "replace", "join", "lower", "upper", "strip", "hex", "__str__"})


_OP_TYPE_NAME = re.compile(r"[A-Z][a-zA-Z0-9>_]*")  # TensorFlow's rule for registered op names (op_def_builder)


def is_registered_op_type(name: str) -> bool:
    """Whether TensorFlow registers an op of this type (the generated ``op_types``, all of them)."""
    return name in _registered_op_types()


@functools.cache
def _registered_op_types() -> frozenset:
    return frozenset(_document()["op_types"])


_VERSION = re.compile(r"V\d+$")  # TensorFlow's suffix for a later version of an op (AddV2, FusedBatchNormV3)


def later_versions_of(name: str) -> frozenset:
    """The registered later versions of an op type (``Add`` -> AddV2; ``BatchMatMulV2`` ->
    BatchMatMulV3): the types that share its name but for a higher version suffix. TensorFlow adds
    a version as a new op and moves its Python API to it (``a + b`` made Add before TF 1.15, AddV2
    since), so code that made one type in TF1 may make a later one now."""
    base = _VERSION.sub("", name)
    return frozenset(t for t in _versions().get(base, ()) if _version(t) > _version(name))


def _version(name: str) -> int:
    found = _VERSION.search(name)
    return int(found.group()[1:]) if found else 1


@functools.cache
def _versions() -> dict:
    found: dict = {}
    for op_type in _registered_op_types():
        found.setdefault(_VERSION.sub("", op_type), set()).add(op_type)
    return {base: frozenset(types) for base, types in found.items() if len(types) > 1}


# ``tf.compat.v1.py_func`` creates a PyFunc op only in a graph: run eagerly, it calls the Python
# function itself and no op exists for any map to find (TF2's answer: tf.numpy_function under
# tf.custom_gradient)
PY_FUNC_TYPES = frozenset({"PyFunc", "PyFuncStateless"})


def can_be_op_type(name: str) -> bool:
    """Whether ``name`` can be the type of a registered op (a key TF1's override map can match)."""
    return _OP_TYPE_NAME.fullmatch(name) is not None


def canonical(qualified_name: str) -> str:
    """``tensorflow.compat.v1.sign`` -> ``tensorflow.sign``; other names unchanged."""
    for prefix in _PREFIXES:
        if qualified_name.startswith(prefix):
            return "tensorflow." + qualified_name[len(prefix):]
    return qualified_name


def op_type_of_callable(qualified_names: Names) -> OpType | None:
    """The op type a call creates and can be wrapped for (see :func:`_op_types`), or None."""
    return _lookup(_op_types()[1], qualified_names)
