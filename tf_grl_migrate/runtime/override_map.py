"""``gradient_override_map(op_type_map)``: TF1's ``graph.gradient_override_map`` with TF1's meaning
under TF2. Ops of a mapped type *created in the block* (executed eagerly, or traced into a
``tf.function``, Keras layers and models included) use the mapped gradient, wherever and whenever
their gradient is taken later: by a tape outside a ``tf.function`` or inside one, or by
``tf.gradients`` in a graph. Ops created before or after the block are untouched.

How, where the op is created in a graph (a ``tf.function`` being traced): an op callback
(TensorFlow calls it right after every op is created) hands each output of a mapped op on through
a ``tf.custom_gradient`` link whose gradient is the mapped one, computed from the op's own inputs,
outputs and attributes; the consumers see that link, so the op's ordinary gradient is never
reached (by a tape or by ``tf.gradients``). Where the op runs eagerly, TensorFlow ignores what a
callback returns, and records the op on the active tapes right after it: there the op is recorded
with the mapped gradient instead (the tape's recording API), its inputs and outputs kept for it.
TensorFlow's own record of the op, which its op wrapper makes right after the callbacks, is
dropped (``execute.record_gradient`` filtered for that one record). In legacy ``tf.compat.v1``
graph mode (a plain ``tf.Graph``, not a ``tf.function``'s) it is TensorFlow's own map on that graph.

Threads: TF1's map belonged to the graph, so every thread's ops saw it. Here a thread's blocks
live in the op callback it installs (``_Owner``); TensorFlow keeps op callbacks per thread, and
``tf.distribute`` hands the callbacks of the thread that calls ``strategy.run`` (or ``fit``) on to
its replica threads, so their ops see the blocks entered around the call; a thread of the user's
own started inside a block gets the callback too (a ``threading`` profile hook, set only while a
block is active). Where blocks are active on several threads, a thread started then cannot be
tied to one: an op of a mapped type it makes raises.

TensorFlow internals it relies on, named in ``_internals`` and nowhere else: the op callbacks
(``tensorflow.python.framework.op_callbacks`` and the eager context's per-thread list), the tape
set's state (``pywrap_tfe.TFE_Py_TapeSet*``), the tape's ``record.record_operation`` and the op
wrappers' ``execute.record_gradient``, the gradient
registry (``ops._gradient_registry``, for names registered with ``tf.RegisterGradient`` and
borrowed built-in gradients), and ``FuncGraph`` (a ``tf.function``'s graph, as against a
legacy one). Where they are not in
the expected form, entering a block raises one error naming the TensorFlow version; nothing is
silently ordinary.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, Optional

import tensorflow as tf

from ..knowledge.ops import PY_FUNC_TYPES, later_versions_of  # PY_FUNC_TYPES: op types made only in graphs

_STATE = threading.local()  # per thread: .owner (its blocks), .busy, .skip (a record to drop)
_THREADS_LOCK = threading.RLock()
Gradient = Callable[..., Any]  # a gradient function, (op, *output gradients) -> input gradients
Mapped = tuple[Gradient, str]  # an op type's gradient under a block, and the name it is shown by
Attrs = Optional[tuple[Any, ...]]  # an op's attributes as an op callback gets them: (name, value, ...)
_ACTIVE: list[_Owner] = []  # the owners with an active block, any thread (for threads started inside a block)
_PROFILE: list[Any] = []  # [the threading profile hook ours replaced] while a block is active anywhere


class _Block:
    """An active block: its map, and what was made in it (for its exit): variables, the mapped
    types, and later versions of a mapped type (``later``: version -> the mapped type)."""

    __slots__ = ("map", "variables", "made", "later", "made_later")

    def __init__(self, resolved: dict[str, Mapped]):
        self.map, self.variables = resolved, 0  # {op type: (gradient function, name)}
        self.made: set[str] = set()
        self.later = {version: key for key in resolved for version in later_versions_of(key)}
        self.made_later: set[str] = set()


class _Owner:
    """The blocks one thread entered, innermost last, and the op callback that reads them.

    TensorFlow keeps op callbacks per thread, and ``tf.distribute``'s MirroredStrategy hands the
    thread that calls ``strategy.run`` (or ``fit``) its op callbacks on to each replica thread it
    starts: so the callback carries its blocks with it, and ops a replica creates see the blocks
    entered around ``strategy.run``, as TF1's graph-wide map did. A block entered inside a replica
    is that replica's own (``parent``: the blocks it inherited, looked up after its own)."""

    __slots__ = ("stack", "parent")

    def __init__(self, parent: _Owner | None):
        self.stack: list[_Block] = []
        self.parent = parent

    def blocks(self) -> Iterator[_Block]:
        """Every block whose map applies here, innermost first."""
        owner: _Owner | None = self
        while owner is not None:
            yield from reversed(owner.stack)
            owner = owner.parent

    def on_op(self, op_type: str | bytes, inputs: Sequence[tf.Tensor], attrs: Attrs, outputs: Sequence[tf.Tensor],
              op_name: str | None = None, graph: tf.Graph | None = None) -> list[tf.Tensor] | None:
        return _callback(self, op_type, inputs, attrs, outputs, op_name, graph)


class _Ambiguous:
    """The op callback of a thread started while blocks were active on several threads: which
    block its ops belong to cannot be known, so an op of a type any of them maps raises."""

    __slots__ = ("owners",)

    def __init__(self, owners: list[_Owner]) -> None:
        self.owners = owners

    def on_op(self, op_type: str | bytes, inputs: Sequence[tf.Tensor], attrs: Attrs, outputs: Sequence[tf.Tensor],
              op_name: str | None = None, graph: tf.Graph | None = None) -> list[tf.Tensor] | None:
        if isinstance(op_type, bytes):
            op_type = op_type.decode()
        if not getattr(_STATE, "busy", False) and any(op_type in b.map for o in self.owners for b in o.blocks()):
            raise RuntimeError(
                f"gradient_override_map: a {op_type!r} op was made on a thread started while map blocks were active "
                "on several threads, so which block it belongs to cannot be known (TF1 kept one map per graph). "
                "Under tf.distribute, enter the map inside the replica function; in a thread of your own, inside "
                "the thread's function")
        return None


def _ours(callback: object) -> bool:
    return isinstance(getattr(callback, "__self__", None), (_Owner, _Ambiguous))


def _own_callbacks() -> list[Callable[..., Any]]:
    """This thread's op callback list, made its own first: TensorFlow keeps the list per thread,
    and tf.distribute hands the very list object of the thread that calls ``strategy.run`` on to
    each replica thread, so adding to it there would add to the caller's too."""
    data = _internals().context()._thread_local_data
    data.op_callbacks = list(data.op_callbacks)
    return data.op_callbacks


def _owner_here() -> _Owner:
    """This thread's owner of blocks, made (with its callback installed) at its first block; the
    blocks it inherited (a replica's caller's) are looked up after its own."""
    owner = getattr(_STATE, "owner", None)
    if owner is not None:
        return owner
    inherited = [o for cb in _own_callbacks() if isinstance(o := getattr(cb, "__self__", None), _Owner)]
    owner = _STATE.owner = _Owner(inherited[-1] if inherited else None)
    _internals().add_op_callback(owner.on_op)
    return owner


def _retire(owner: _Owner) -> None:
    """After a block of ``owner`` ended: where it was the last, its callback leaves this thread and
    it is no longer active (the threading hook goes with the last active owner)."""
    if owner.stack:
        return
    if getattr(_STATE, "owner", None) is owner:
        _STATE.owner = None
        if owner.on_op in _own_callbacks():
            _internals().remove_op_callback(owner.on_op)
    with _THREADS_LOCK:
        if owner not in _ACTIVE:
            return
        _ACTIVE.remove(owner)
        if not _ACTIVE and _PROFILE:
            previous = _PROFILE.pop()
            if getattr(threading, "getprofile", lambda: _started_in_a_block)() is _started_in_a_block:
                threading.setprofile(previous)


def _started_in_a_block(frame: types.FrameType, event: str, arg: object) -> None:
    """The profile hook ``threading`` runs first in every thread started while a block is active
    anywhere: the new thread gets the callback of the one thread with active blocks (TF1's map
    was the graph's, whichever thread made the op), or, with several, one that refuses to guess.
    A thread tf.distribute starts replaces these with its caller's callbacks."""
    sys.setprofile(_PROFILE[0] if _PROFILE else None)
    try:
        with _THREADS_LOCK:
            owners = [o for o in _ACTIVE if o.stack]
        if not owners:
            return
        callbacks = _own_callbacks()
        callbacks[:] = [cb for cb in callbacks if not _ours(cb)]
        _internals().add_op_callback(owners[0].on_op if len(owners) == 1 else _Ambiguous(owners).on_op)
    except Exception:  # noqa: BLE001 - a hook must never break the user's thread; its ops then see no map
        return


def _activate(owner: _Owner) -> None:
    with _THREADS_LOCK:
        if owner not in _ACTIVE:
            _ACTIVE.append(owner)
        if len(_ACTIVE) == 1 and not _PROFILE:
            _PROFILE.append(getattr(threading, "getprofile", lambda: None)())
            threading.setprofile(_started_in_a_block)


class _TF(NamedTuple):
    """TensorFlow internals the map relies on, found and checked once (the callback asks for them
    at every mapped op)."""

    add_op_callback: Any  # op_callbacks.add_op_callback: to this thread's list (eagerly: callbacks switched on)
    remove_op_callback: Any
    lookup: Any  # a registered gradient by name (ops._gradient_registry.lookup)
    tape_set: Any  # the tape set's thread controls (pywrap_tfe.TFE_Py_TapeSet*)
    record_operation: Any  # record.record_operation
    func_graph: type  # FuncGraph: a tf.function's graph, as against a legacy one
    marks_return: Any  # the code that makes a tf.function's output identities
    context: Any  # the eager context: its per-thread op callback list, which tf.distribute hands on
    execute: Any  # tensorflow.python.eager.execute: its record_gradient, which op wrappers call after callbacks


@functools.cache
def _internals() -> _TF:
    try:
        # backprop sets execute.record_gradient (TensorFlow's own), which the map's record filter wraps
        from tensorflow.python import pywrap_tfe
        from tensorflow.python.eager import backprop, context, execute, record  # noqa: F401
        from tensorflow.python.framework import auto_control_deps, op_callbacks
        from tensorflow.python.framework import ops as tf_ops
        from tensorflow.python.framework.func_graph import FuncGraph

        lookup = tf_ops._gradient_registry.lookup
        for name in ("TFE_Py_TapeSetIsStopped", "TFE_Py_TapeSetIsEmpty"):
            getattr(pywrap_tfe, name)
        if not callable(record.record_operation):
            raise AttributeError("record_operation")
        marks_return = auto_control_deps.AutomaticControlDependencies.mark_as_return.__code__
        if not callable(execute.record_gradient):
            raise AttributeError("execute.record_gradient")
        context.ensure_initialized()
        if not isinstance(context.context()._thread_local_data.op_callbacks, list):
            raise AttributeError("op_callbacks")
    except (ImportError, AttributeError, TypeError) as exc:
        raise RuntimeError(
            f"tf_grl_migrate.gradient_override_map relies on TensorFlow's op callbacks and gradient registry "
            f"(tensorflow.python.framework.op_callbacks, ops._gradient_registry), which TensorFlow {tf.__version__} "
            "does not have in the form it was written for (TensorFlow 2.13 to 2.21); nothing was changed. "
            "Wrap the overridden ops in @tf.custom_gradient functions instead."
        ) from exc
    return _TF(op_callbacks.add_op_callback, op_callbacks.remove_op_callback, lookup, pywrap_tfe,
               record.record_operation, FuncGraph, marks_return, context.context, execute)


def _made_by_tf_function(depth: int = 16) -> bool:
    """Whether the op being created is one of the identities ``tf.function`` adds to hand its
    outputs back (``AutomaticControlDependencies.mark_as_return``): TensorFlow's machinery, not
    code of the block's, so no map applies to it (a map entered eagerly around the first call of
    a ``tf.function`` is active while it is traced, its outputs marked included)."""
    code = _internals().marks_return
    frame: types.FrameType | None = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return False
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


class GraphOp:
    """The ``op`` a mapped gradient function receives: ``inputs``, ``outputs``, ``type``, ``name``,
    ``get_attr`` and ``graph``, as TF1's ``tf.Operation`` offered them."""

    __slots__ = ("inputs", "outputs", "type", "name", "_attrs")

    def __init__(self, op_type: str, inputs: Sequence[tf.Tensor], outputs: Sequence[tf.Tensor], attrs: Attrs,
                 name: str | None) -> None:
        self.type, self.inputs, self.outputs, self.name = op_type, list(inputs), list(outputs), name
        self._attrs = dict(zip(attrs[::2], attrs[1::2])) if attrs else {}

    def get_attr(self, name: str) -> Any:
        op = self._graph_op()
        if op is not None:  # created in a graph: the real op answers, as TF1's did
            return op.get_attr(name)
        if name not in self._attrs:
            raise ValueError(f"no attr named {name!r} on this {self.type} op")
        value = self._attrs[name]
        if hasattr(value, "type") and hasattr(value, "is_floating"):  # a DType
            return value
        return tf.dtypes.as_dtype(value) if name in ("T", "dtype", "DstT", "SrcT") and isinstance(value, int) else value

    def _graph_op(self) -> tf.Operation | None:
        if not self.outputs:
            return None
        try:
            return self.outputs[0].op
        except AttributeError:  # an eager tensor has no op
            return None

    @property
    def graph(self) -> tf.Graph | None:
        return getattr(self.outputs[0], "graph", None) if self.outputs else None

    def __getattr__(self, name: str) -> Any:  # only for what the slots and methods above do not offer
        raise AttributeError(
            f"the op a gradient receives under tf_grl_migrate.gradient_override_map offers inputs, outputs, "
            f"type, name, get_attr and graph; `op.{name}` is a TF1 tf.Operation's only (it exists when the "
            "block runs in a tf.compat.v1 graph): read what the gradient needs from those, or wrap the op in a "
            "@tf.custom_gradient function")


class _OpInGraph:
    """The op a gradient function receives where the runtime runs it in a graph of its own
    (:func:`call_as_tf1`): inputs and outputs are that graph's tensors, the rest is the op's."""

    __slots__ = ("_op", "_inputs", "_outputs")

    def __init__(self, op: Any, inputs: list[tf.Tensor] | None, outputs: list[tf.Tensor] | None) -> None:
        self._op, self._inputs, self._outputs = op, inputs, outputs

    @property
    def inputs(self) -> list[tf.Tensor]:  # None where an eager tape kept none: the op's own answer (its error) then
        return self._op.inputs if self._inputs is None else self._inputs

    @property
    def outputs(self) -> list[tf.Tensor]:
        return self._op.outputs if self._outputs is None else self._outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._op, name)


_EAGER_DIFFERS = PY_FUNC_TYPES | {"EagerPyFunc"}  # ops whose Python wrappers return another structure eagerly
_RUNS_ALIKE: dict[tuple[Gradient, str], bool] = {}  # (gradient function, op type) -> whether it makes none of those ops


def call_as_tf1(function: Gradient, op: Any, inputs: list[tf.Tensor] | None, outputs: list[tf.Tensor] | None,
                dys: Sequence[tf.Tensor]) -> Any:
    """``function(op, *dys)`` with what TF1 gave it. TF1 built every gradient function into a
    graph; eagerly, the calls that answer otherwise are the py_func family (``tf.compat.v1.py_func``
    returns a bare tensor for a one-element ``Tout`` list, so a legacy ``[0]`` takes a row). So a
    gradient function's first eager call (per op type) runs in a graph; where that graph holds no
    py_func-family op, later eager calls run eagerly, alike; where it does, every eager call runs in
    a ``tf.function`` made for it (the Python values it reads are read then, as each TF1
    ``tf.gradients`` call read them). In a graph it is called as it is. ``inputs``/``outputs``: the
    op's tensors (None where a tape kept none)."""
    if not tf.executing_eagerly():
        return function(op, *dys)
    key = (function, op.type)
    alike = _RUNS_ALIKE.get(key)
    if alike:
        return function(op, *dys)

    def in_graph(inputs: list[tf.Tensor] | None, outputs: list[tf.Tensor] | None, dys: list[tf.Tensor]) -> Any:
        return function(_OpInGraph(op, inputs, outputs), *dys)

    traced = tf.function(in_graph, autograph=False)
    args = (inputs, outputs, list(dys))
    if alike is None:
        try:
            concrete = traced.get_concrete_function(*args)
        except Exception:  # noqa: BLE001 - no graph takes it (nor did TF1's): its eager answer, or error, stands
            return function(op, *dys)
        _RUNS_ALIKE[key] = not (_op_types(concrete.graph) & _EAGER_DIFFERS)
        return concrete(*args)
    return traced(*args)


def _op_types(graph: tf.Graph) -> set[str]:
    """The op types of a graph and of the functions it holds (a py_func in a ``tf.cond`` branch)."""
    definition = graph.as_graph_def()
    return {n.op for n in definition.node} | {n.op for f in definition.library.function for n in f.node_def}


def _resolve(op_type_map: object) -> dict[str, Mapped]:
    """{op type: (gradient function(op, *grads), shown name)}, every entry checked before anything
    changes."""
    from tensorflow.python.framework import op_def_registry

    if not isinstance(op_type_map, dict):
        raise TypeError(f"gradient_override_map takes a dict {{op type: gradient}}, got {type(op_type_map).__name__}")
    lookup = _internals().lookup
    resolved: dict[str, Mapped] = {}
    for op_type, target in op_type_map.items():
        if not isinstance(op_type, str):
            raise TypeError(f"gradient_override_map: op type keys must be strings, got {op_type!r}")
        if op_def_registry.get(op_type) is None:
            raise ValueError(f"gradient_override_map: {op_type!r} is not a TensorFlow op type "
                             "(keys are op types such as 'Relu', 'Sign', 'Identity', not function names)")
        if isinstance(target, str):
            try:
                function = lookup(target)
            except LookupError:
                raise ValueError(f"gradient_override_map: no gradient is registered as {target!r} (the target of "
                                 f"{op_type!r}); register it with @tf.RegisterGradient({target!r}) first, or pass "
                                 "the (op, grad) function itself") from None
            resolved[op_type] = (function, target)
        elif callable(target):
            resolved[op_type] = (target, getattr(target, "__name__", "gradient"))
        else:
            raise TypeError(f"gradient_override_map: the gradient for {op_type!r} must be a registered gradient "
                            f"name or an (op, grad) function, got {type(target).__name__}")
    return resolved


def _innermost(owner: _Owner, op_type: str) -> Mapped | None:
    for block in owner.blocks():
        if op_type in block.map:
            return block.map[op_type]
    return None


def _legacy_graph() -> tf.Graph | None:
    """The default graph where it is a legacy ``tf.compat.v1`` one (not eager, not a ``tf.function``'s
    graph), where TF1's own map works; None elsewhere."""
    current = tf.compat.v1.get_default_graph()
    return None if tf.executing_eagerly() or isinstance(current, _internals().func_graph) else current


def _callback(owner: _Owner, op_type: str | bytes, inputs: Sequence[tf.Tensor], attrs: Attrs,
              outputs: Sequence[tf.Tensor], op_name: str | None = None,
              graph: tf.Graph | None = None) -> list[tf.Tensor] | None:
    """After an op ran eagerly: a mapped one is recorded with the mapped gradient. After a mapped
    op was created in a graph: its outputs, handed on through a custom-gradient link whose
    gradient is the mapped one (eagerly, TensorFlow ignores what a callback returns). ``owner``:
    the blocks of the thread whose callback this is (this thread's, or those of the thread that
    started it); where this thread entered blocks of its own, its own callback answers."""
    if getattr(_STATE, "busy", False):
        return None
    mine = getattr(_STATE, "owner", None)
    if mine is not None and mine is not owner:
        return None  # this thread's own blocks (with those it inherited after them) answer
    if isinstance(op_type, bytes):  # TensorFlow's Python path names the op type in bytes
        op_type = op_type.decode()
    eager = graph is None and tf.executing_eagerly()
    for block in owner.blocks():  # what each block made, for its exit
        block.variables += op_type == "VarHandleOp"
        if op_type in block.map:
            block.made.add(op_type)
        elif op_type in block.later:
            block.made_later.add(op_type)
    if op_type == "VarHandleOp" and _innermost(owner, "Identity") is not None:
        raise ValueError(
            "gradient_override_map: a variable was created in a block that maps 'Identity'; TF1 read each variable "
            "through an Identity op (`w/read`) that the map overrode, TF2 reads it with ReadVariableOp, so no "
            "gradient here can be TF1's for it. Create the variables (build the model) before the block, or wrap "
            "the overridden ops in @tf.custom_gradient functions")
    found = _innermost(owner, op_type)
    if found is None or not outputs or (not eager and _made_by_tf_function()):
        return None
    function = found[0]
    if eager:
        slow_path = sys._getframe(2).f_code.co_name == "execute_with_callbacks"  # TensorFlow's Python path (-> on_op)
        _STATE.busy = True
        try:
            _record_eagerly(function, op_type, inputs, outputs, attrs, slow_path)
        finally:
            _STATE.busy = False
        return None
    _STATE.busy = True  # the link's own ops (identities) are not mapped, whatever the map says
    try:
        linked = _linked(function, op_type, tuple(inputs), tuple(outputs), attrs, op_name)
    finally:
        _STATE.busy = False
    if linked is not None:
        _skip_next_record(linked)  # the op wrapper records the op again, producing the link: not on the tapes
    return linked


def _backward(function: Gradient, op_type: str, inputs: Sequence[tf.Tensor], outputs: Sequence[tf.Tensor],
              attrs: Attrs, op_name: str | None, positions: list[int] | None = None) -> Callable[..., list[Any]]:
    """The mapped gradient as a backward function: output gradients in, one gradient per input
    (``positions``: of those inputs only) out."""

    def backward(*dys: tf.Tensor) -> list[Any]:
        op = GraphOp(op_type, inputs, outputs, attrs, op_name)
        result = call_as_tf1(function, op, op.inputs, op.outputs, dys)
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(result) != len(inputs):
            raise ValueError(f"the gradient for {op_type!r} returned {len(result)} values for an op of "
                             f"{len(inputs)} inputs")
        return result if positions is None else [result[i] for i in positions]

    return backward


def _record_eagerly(function: Gradient, op_type: str, inputs: Sequence[tf.Tensor], outputs: Sequence[tf.Tensor],
                    attrs: Attrs, slow_path: bool) -> None:
    """An eager op just ran: record it on the active tapes with the mapped gradient. TensorFlow's
    fast path recorded it with its ordinary gradient before calling back: the tapes keep the
    later record of the same outputs. Its Python path (``slow_path``, an op whose inputs needed
    converting) records it right after the callbacks: that record is kept off the tapes.
    Nothing is recorded where recording is stopped already (a user's ``tape.stop_recording()``)
    or no tape is active."""
    tape_set, record_operation = _internals().tape_set, _internals().record_operation
    if tape_set.TFE_Py_TapeSetIsStopped() or tape_set.TFE_Py_TapeSetIsEmpty():
        return
    kept_inputs, kept_outputs = list(inputs), list(outputs)
    record_operation(op_type, kept_outputs, kept_inputs,
                     _backward(function, op_type, kept_inputs, kept_outputs, attrs, None))
    if slow_path:  # TensorFlow records the op after this callback: its ordinary record must not land
        _skip_next_record(kept_outputs)


def _skip_next_record(outputs: Sequence[tf.Tensor]) -> None:
    """Keep TensorFlow's own recording of the op just handled off the tapes: generated op wrappers
    record it right after its callbacks (``execute.record_gradient``), with its ordinary gradient
    (and, in a graph, as producing the outputs the callback returned). That one record, of these
    ``outputs``, is dropped (:func:`_record_gradient`); recording itself is never stopped, so a
    variable read or a ``tape.watch`` right after the op is recorded as it should be."""
    _STATE.skip = outputs[0] if outputs else None


def _record_gradient(op_name: str, inputs: Sequence[tf.Tensor], attrs: Attrs, outputs: Sequence[tf.Tensor]) -> Any:
    """TensorFlow's ``execute.record_gradient``, less the one record :func:`_skip_next_record`
    asked to drop (a later record of other outputs clears the request)."""
    skip = getattr(_STATE, "skip", None)
    if skip is not None:
        _STATE.skip = None
        if outputs and outputs[0] is skip:
            return None
    return _RECORD[0](op_name, inputs, attrs, outputs)


_RECORD: list[Callable[..., Any]] = []  # [TensorFlow's record_gradient], once ours is in its place


def _install_record_filter() -> None:
    execute = _internals().execute
    if not _RECORD:
        _RECORD.append(execute.record_gradient)
        execute.record_gradient = _record_gradient


def _linked(function: Gradient, op_type: str, inputs: tuple[tf.Tensor, ...], outputs: tuple[tf.Tensor, ...],
            attrs: Attrs, op_name: str | None) -> list[tf.Tensor] | None:
    differentiable = [t for t in inputs if t.dtype.is_floating or t.dtype.is_complex]
    if not differentiable:
        return None
    positions = [i for i, t in enumerate(inputs) if t.dtype.is_floating or t.dtype.is_complex]

    @tf.custom_gradient
    def link(*xs: tf.Tensor) -> tuple[list[tf.Tensor], Callable[..., list[Any]]]:
        return [tf.identity(o) for o in outputs], _backward(function, op_type, inputs, outputs, attrs, op_name,
                                                            positions)

    return link(*differentiable)


class gradient_override_map:  # lower case: used like TF1's, `with gradient_override_map({...}):`
    """TF1's ``graph.gradient_override_map`` with TF1's meaning under TF2: ops of a mapped type
    created in the block use the mapped gradient, wherever and whenever their gradient is taken.

    Values as TF1 took them: a name registered with ``tf.RegisterGradient`` (legacy registrations
    work unchanged), a built-in op type whose gradient is borrowed (``"Identity"``: straight
    through), or an ``(op, grad)`` function; the ``op`` offers ``inputs``, ``outputs``, ``type``
    and ``get_attr``. Blocks nest (the inner map wins for its types), are undone on exit also when
    the block raises, and apply to the ops of the thread that entered them, of the replica threads
    ``tf.distribute`` starts from it, and of threads it starts while they are active; bad keys or
    values raise before anything changes. A block that built a model (variables created) but made no op of a
    mapped type raises when it ends: TF2 makes a model's ops when it is called, where TF1 made them
    when it was built, so the map would silently apply to none. A mapped type the block never made
    while it made a later version of it (``Add``: ``a + b`` makes AddV2 since TF 1.15) is warned of
    when the block ends (``RuntimeWarning``): the entry applied to nothing. In legacy ``tf.compat.v1`` graph
    mode (a plain ``tf.Graph`` is the default graph) it is TensorFlow's own map on that graph, or
    on ``graph=`` (the graph the replaced code named); eagerly and in a ``tf.function``, ``graph=``
    plays no part. Usable by hand: ``ctx = gradient_override_map(m); ctx.__enter__(); ...;
    ctx.__exit__(None, None, None)``.
    """

    __slots__ = ("_map", "_graph", "_entered")

    def __init__(self, op_type_map: dict[str, str | Gradient], graph: tf.Graph | None = None) -> None:
        self._map, self._graph = op_type_map, graph
        self._entered: tuple[str, Any] | None = None

    def __enter__(self) -> gradient_override_map:
        if self._entered is not None:
            raise RuntimeError("this gradient_override_map block is already active; create a new one to nest")
        legacy = _legacy_graph()
        if legacy is not None:  # TF1 graph mode: TF's own map
            graph = self._graph if self._graph is not None else legacy
            _resolve(self._map)  # the same checks, before anything changes
            inner = graph.gradient_override_map({k: _registered_name(v) for k, v in self._map.items()})
            inner.__enter__()
            self._entered = ("graph", inner)
            return self
        resolved = _resolve(self._map)
        eager_py_func = sorted(PY_FUNC_TYPES & set(resolved)) if tf.executing_eagerly() else []
        if eager_py_func:
            raise ValueError(
                f"gradient_override_map: {eager_py_func[0]!r} ops are never created eagerly (tf.compat.v1.py_func "
                "and tf.numpy_function run their Python function directly), so this map could not apply; wrap "
                "the call in a @tf.custom_gradient function (tf.numpy_function inside it), or enter the map "
                "inside a tf.function, where the op exists")
        _install_record_filter()
        owner = _owner_here()
        block = _Block(resolved)
        owner.stack.append(block)
        _activate(owner)
        self._entered = ("callback", (owner, block))
        return self

    def __exit__(self, *exc: Any) -> bool | None:
        if self._entered is None:
            raise RuntimeError("this gradient_override_map block is left but was never entered (or was left "
                               "already): call __enter__() first, or use it in a `with` statement")
        kind, value = self._entered
        self._entered = None
        if kind == "graph":
            return value.__exit__(*exc)
        owner, block = value
        for i in range(len(owner.stack) - 1, -1, -1):
            if owner.stack[i] is block:
                del owner.stack[i]
                break
        _retire(owner)
        if exc[0] is None and block.variables and not block.made:
            raise RuntimeError(
                f"gradient_override_map: variables were created in this block (a model was built) but no "
                f"{'/'.join(sorted(block.map))} op was: TF2 makes a model's ops when it is called, not when it "
                "is built, "
                "so TF1's map would apply to none of them and the gradients would silently be the ordinary ones. "
                "Call the model inside the block (`with gradient_override_map(...): y = model(x)`), where its ops "
                "are made"
            )
        for version in sorted(block.made_later):
            key = block.later[version]
            if key not in block.made:
                warnings.warn(
                    f"gradient_override_map: the block made {version!r} ops but no {key!r} op: TensorFlow moved this "
                    f"code from {key!r} to {version!r}, a later version of the op, so the {key!r} entry applied to "
                    f"nothing, as under TF 1.15 and TF2 graphs; under the TF1 that made {key!r} it applied. Map "
                    f"{version!r} to keep that gradient, or remove {key!r}", RuntimeWarning, stacklevel=2)
        return False


_FUNCTIONS_REGISTERED: dict[int, str] = {}


def _registered_name(target: str | Gradient) -> str:
    """TF1 graph mode takes names: a function target is registered under a fresh name once."""
    if isinstance(target, str):
        return target
    with _THREADS_LOCK:  # replica threads may register the same function at once
        name = _FUNCTIONS_REGISTERED.get(id(target))
        if name is None:
            name = f"tf_grl_migrate_gradient_{len(_FUNCTIONS_REGISTERED)}_{getattr(target, '__name__', 'gradient')}"
            tf.RegisterGradient(name)(target)
            _FUNCTIONS_REGISTERED[id(target)] = name
    return name


def py_func(func: Callable[..., Any], inp: Sequence[Any], Tout: Any, stateful: bool = True,  # TF1's parameter names
            name: str | None = None, grad: Gradient | None = None,
            override_types: Sequence[str] = ("PyFunc", "PyFuncStateless")) -> Any:
    """TF1's recipe ``tf.RegisterGradient(name)(grad)`` + ``with g.gradient_override_map({"PyFunc":
    name}): tf.py_func(func, inp, Tout, stateful=..., name=...)``, in TF2: ``func`` runs on numpy
    arrays (``tf.numpy_function``) and ``grad(op, *output_grads)`` gives the gradients of ``inp``,
    its ``op`` offering ``inputs``, ``outputs``, ``type`` and ``name`` as TF1's PyFunc op did.
    ``override_types``: the op types the replaced map named; TF1 made ``PyFunc`` when ``stateful``
    and ``PyFuncStateless`` otherwise, and an op type the map missed got no gradient (py_func is not
    differentiable): so here too. In a ``tf.compat.v1`` graph it is TF1's recipe itself."""
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    if grad is None or op_type not in override_types:
        return _returned_as_tf1(tf.numpy_function(func, inp, Tout, stateful=stateful, name=name), Tout)
    legacy = _legacy_graph()
    if legacy is not None:
        with legacy.gradient_override_map({op_type: _registered_name(grad)}):
            return tf.compat.v1.py_func(func, inp, Tout, stateful=stateful, name=name)
    inputs = [tf.convert_to_tensor(x) for x in inp]

    @tf.custom_gradient
    def forward(*xs: tf.Tensor) -> tuple[Any, Callable[..., list[Any]]]:
        result = _returned_as_tf1(tf.numpy_function(func, list(xs), Tout, stateful=stateful, name=name), Tout)
        outputs = list(result) if isinstance(result, list) else [result]

        def backward(*dys: tf.Tensor) -> list[Any]:
            op = GraphOp(op_type, xs, outputs, (), name)
            got = call_as_tf1(grad, op, op.inputs, op.outputs, dys)
            got = list(got) if isinstance(got, (list, tuple)) else [got]
            if len(got) != len(xs):
                raise ValueError(f"the gradient of this py_func returned {len(got)} values for {len(xs)} inputs")
            return got

        return result, backward

    return forward(*inputs)


def _returned_as_tf1(result: Any, Tout: Any) -> Any:
    """What TF1's ``py_func`` returned: a list for a list or tuple ``Tout`` (of one dtype too), a
    tensor for one dtype. Eagerly ``tf.numpy_function`` returns a bare tensor for a one-element
    list, where a legacy ``py_func(...)[0]`` would take the first row."""
    if isinstance(Tout, (list, tuple)):
        return list(result) if isinstance(result, (list, tuple)) else [result]
    return result
