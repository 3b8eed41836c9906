"""``override_gradients``: TF1's op-type gradient overrides, honoured by TF2's tapes where the
gradients are computed (the older recipe beside the runtime map, ``override_map.py``)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import tensorflow as tf

if TYPE_CHECKING:
    from .override_map import Gradient

__all__ = ["override_gradients"]


_ABSENT: Any = object()  # no registry entry (a sentinel: entries are dicts)
_OVERRIDES_LOCK = threading.RLock()
_ACTIVE: list[tuple[object, dict[str, dict[str, Any]]]] = []  # [(token, {op type: registry entry})], innermost last
_ORIGINALS: dict[str, Any] = {}  # op type -> its registry entry before the first active override (or _ABSENT)


def _gradient_registry() -> tuple[dict[str, dict[str, Any]], str, str]:
    """TensorFlow's gradient registry: (table, type tag, location tag). It is the one
    TensorFlow-internal structure override_gradients relies on; anything else raises one error
    that names the TensorFlow version."""
    try:
        from tensorflow.python.framework import ops as tf_ops
        from tensorflow.python.framework import registry as tf_registry

        table = tf_ops._gradient_registry._registry
        type_tag, location_tag = tf_registry._TYPE_TAG, tf_registry._LOCATION_TAG
        if (
            not isinstance(table, dict)
            or not isinstance(table.get("Identity"), dict)
            or type_tag not in table["Identity"]
        ):
            raise TypeError("unexpected registry layout")
    except (ImportError, AttributeError, TypeError) as exc:
        raise RuntimeError(
            f"override_gradients relies on TensorFlow's gradient registry "
            f"(tensorflow.python.framework.ops._gradient_registry), which TensorFlow {tf.__version__} does not "
            "have in the form it was written for (TensorFlow 2.13 to 2.21); nothing was changed. Wrap the "
            "overridden ops in @tf.custom_gradient functions instead."
        ) from exc
    return table, type_tag, location_tag


def _is_op_type(name: str) -> bool:
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(name) is not None


class _TapeOp:
    """The op a gradient function receives from an eager tape, where the tape kept less than the
    function reads: TensorFlow keeps an op's inputs or outputs only if that op type's *own*
    gradient needs them (an Identity keeps neither). Reading what was not kept raises a clear
    error instead of a TypeError on None."""

    __slots__ = ("_op",)

    def __init__(self, op: tf.Operation) -> None:
        self._op = op

    def __getattr__(self, name: str) -> Any:
        return getattr(self._op, name)

    def _kept(self, what: str) -> list[tf.Tensor]:
        value = getattr(self._op, what)
        if value is None:
            raise ValueError(
                f"override_gradients: this gradient function reads op.{what} of a '{self._op.type}' op, which "
                f"TensorFlow's eager tape does not keep for '{self._op.type}' ops (their own gradient does not "
                "need them). Compute the gradient inside a tf.function with tf.gradients, or wrap that op "
                "in a @tf.custom_gradient function that closes over the tensors it needs."
            )
        return value

    @property
    def inputs(self) -> list[tf.Tensor]:
        return self._kept("inputs")

    @property
    def outputs(self) -> list[tf.Tensor]:
        return self._kept("outputs")


def _tape_safe(function: Gradient) -> Gradient:
    from .override_map import call_as_tf1  # run as TF1 ran it: in a graph

    def gradient(op: tf.Operation, *grads: tf.Tensor) -> Any:
        inputs, outputs = op.inputs, op.outputs
        if inputs is None or outputs is None:
            op = _TapeOp(op)
        return call_as_tf1(function, op, inputs, outputs, grads)

    gradient.__name__ = getattr(function, "__name__", "gradient")
    setattr(gradient, "__wrapped__", function)  # what functools.wraps sets
    return gradient


def _resolve_overrides(op_type_map: object, table: dict[str, dict[str, Any]], type_tag: str,
                       location_tag: str) -> dict[str, dict[str, Any]]:
    """{op type: registry entry}, every key and value checked before anything changes."""
    if not isinstance(op_type_map, dict):
        raise TypeError(f"override_gradients takes a dict {{op type: gradient}}, got {type(op_type_map).__name__}")
    resolved = {}
    for op_type, target in op_type_map.items():
        if not isinstance(op_type, str):
            raise TypeError(f"override_gradients: op type keys must be strings, got {op_type!r}")
        if not _is_op_type(op_type):
            raise ValueError(f"override_gradients: {op_type!r} is not a TensorFlow op type "
                             "(keys are op types such as 'Relu', 'Sign', 'Identity', not function names)")
        if isinstance(target, str):
            entry = _ORIGINALS.get(target, table.get(target, _ABSENT))  # TF1 maps to the registry as registered
            if entry is _ABSENT:
                raise ValueError(f"override_gradients: no gradient is registered as {target!r} (the target of "
                                 f"{op_type!r}); register it with @tf.RegisterGradient({target!r}) first, or pass "
                                 "the (op, grad) function itself")
            function = entry[type_tag]
            location = entry[location_tag]
        elif callable(target):
            function, location = target, ("override_gradients", 0, getattr(target, "__name__", "gradient"), "")
        else:
            raise TypeError(f"override_gradients: the gradient for {op_type!r} must be a registered gradient name "
                            f"or an (op, grad) function, got {type(target).__name__}")
        resolved[op_type] = {type_tag: None if function is None else _tape_safe(function), location_tag: location}
    return resolved


def _apply(table: dict[str, dict[str, Any]], op_types: Iterable[str]) -> None:
    """Point each op type at the innermost active override, or back at TensorFlow's own entry."""
    for op_type in op_types:
        entry = next((m[op_type] for _, m in reversed(_ACTIVE) if op_type in m), _ABSENT)
        if entry is _ABSENT:
            original = _ORIGINALS.pop(op_type)
            if original is _ABSENT:
                table.pop(op_type, None)
            else:
                table[op_type] = original
        else:
            table[op_type] = entry


class override_gradients:  # lower case: used like a function, `with override_gradients({...}):`
    """TF1's ``graph.gradient_override_map``, honoured by TF2: while the block is active, every
    gradient *computed* in it uses the mapped gradient for ops of the mapped types.

    ``op_type_map`` maps op types (``"Relu"``, ``"Sign"``) to a name registered with
    ``tf.RegisterGradient`` (a legacy registration works unchanged), the name of a built-in op type
    whose gradient is borrowed (``"Identity"``: straight through), or an ``(op, grad)`` function.
    The ``op`` it receives offers ``op.inputs``, ``op.outputs``, ``op.type`` and ``op.get_attr``.

    It applies where gradients are computed: ``tape.gradient`` (eagerly or inside a
    ``tf.function``), ``tf.gradients`` in a graph, a Keras train step *traced* inside the block.
    A ``tf.function`` traced inside the block keeps the override in that trace, also when called
    later; one traced before it keeps the gradients it was traced with. TensorFlow's gradient
    registry is process-wide: while a block is active, gradients computed by other threads see
    its overrides too, and after it they see the ordinary gradients again. Blocks nest (the inner
    map wins for the op types it names; the outer is restored on exit) and are restored on exit
    also when the block raises. Invalid keys or values raise before anything changes.

        with tf.GradientTape() as tape:
            tape.watch(x)
            y = model(x)[:, class_index]
        with override_gradients({"Relu": "GuidedRelu"}):
            saliency = tape.gradient(y, x)
    """

    __slots__ = ("_map", "_token")

    def __init__(self, op_type_map: dict[str, str | Gradient]) -> None:
        self._map = op_type_map
        self._token: object | None = None

    def __enter__(self) -> override_gradients:
        if self._token is not None:
            raise RuntimeError("this override_gradients block is already active; create a new one to nest")
        with _OVERRIDES_LOCK:
            table, type_tag, location_tag = _gradient_registry()
            resolved = _resolve_overrides(self._map, table, type_tag, location_tag)
            token = object()
            for op_type in resolved:
                _ORIGINALS.setdefault(op_type, table.get(op_type, _ABSENT))
            _ACTIVE.append((token, resolved))
            _apply(table, resolved)
            self._token = token
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        if self._token is None:
            raise RuntimeError("this override_gradients block is left but was never entered (or was left already): "
                               "call __enter__() first, or use it in a `with` statement")
        with _OVERRIDES_LOCK:
            table = _gradient_registry()[0]
            index = next(i for i, (token, _) in enumerate(_ACTIVE) if token is self._token)
            _, resolved = _ACTIVE.pop(index)
            _apply(table, resolved)
            self._token = None
        return False
