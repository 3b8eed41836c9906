"""The TF2 side, in a worker's child: the migrated text under TensorFlow 2, called as the
reference was (the same way, input shape and values, every variable started at TF1's value),
eagerly and inside ``tf.function``: the values of each mode, or the error it raised with the
lines its traceback passed through (``protocol.Values``). It decides nothing."""

from __future__ import annotations

import sys
import traceback
import types
from collections.abc import Callable, Sequence
from typing import Any

from . import calling
from .calling import GIVE_UP, describe, give_up_on, inputs, upstream
from .loading import MissingDependency, ScriptCodeNeeded, explain_missing_name, forget, load
from .protocol import MODES, Entry, ModeError, ModeValues, Param, Request, Setting, Unverifiable, Values

_WRITTEN: dict[str, Any] = {"path": None, "lines": frozenset()}


def setup() -> None:
    import tensorflow as tf

    calling.TF, calling.MODE = tf, "tf2"
    _tf1_fallback(tf)


def _tf1_fallback(tf: Any) -> None:  # the tensorflow module (its __getattr__ is set)
    """Under TF2, a TF1 name in code the tool did not touch (``tf.variable_scope`` beside a
    migrated site) is ``tf.compat.v1``'s, as ``tf_upgrade_v2`` would write it: the migrator leaves
    other TF1 API to that tool. In the lines the tool wrote, TF2's own answer (AttributeError)."""

    def fallback(name: str) -> Any:
        frame = sys._getframe(1)
        if frame.f_code.co_filename == _WRITTEN["path"] and frame.f_lineno in _WRITTEN["lines"]:
            raise AttributeError(f"module 'tensorflow' has no attribute {name!r}")
        if _WRITTEN["path"] is None or name.startswith("__"):
            raise AttributeError(f"module 'tensorflow' has no attribute {name!r}")
        try:
            return getattr(tf.compat.v1, name)
        except AttributeError:
            raise AttributeError(f"module 'tensorflow' has no attribute {name!r}") from None

    tf.__getattr__ = fallback


def _creator(made: list[Any], reference: list[dict[str, Any]]) -> Callable[..., Any]:
    """A variable creator that records each variable made and starts the k-th as TF1's k-th
    started (its initialiser may be random)."""
    import numpy as np

    tf = calling.TF

    def creator(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        k = len(made)
        if k < len(reference):
            initial = np.asarray(reference[k]["values"], np.float32).reshape(reference[k]["shape"])
            kwargs["initial_value"] = lambda: tf.constant(initial)
        v = next_creator(**kwargs)
        made.append(v)
        return v

    return creator


def _run(module: types.ModuleType, entry: Entry, args: Sequence[Param], shape: Sequence[Any], setting: Setting,
         variables: list[dict[str, Any]], y_shapes: list[list[int]], mode: str,
         made: list[Any], defined: dict[str, Any]) -> tuple[list[Any], list[Any], int]:
    """One mode at one setting: (outputs, gradients, how many variables the code made). The
    upstream gradient has the shapes of TF1's outputs (``y_shapes``), as TF1's had; ``defined``:
    the variables ``get_variable`` held after the definitions."""
    import numpy as np

    tf = calling.TF
    values = inputs(args, shape, entry)
    extra = calling.module_inputs(module, entry, "migrated")
    base = len(made)  # those the module's definitions made
    creator = _creator(made, variables)
    ws = [tf.constant(upstream(list(s))) for s in y_shapes]

    def step(*xs: Any) -> tuple[list[Any], list[Any]]:
        with tf.variable_creator_scope(creator), tf.GradientTape() as tape:
            for x in [*xs, *extra.values()]:
                tape.watch(x)
            ys = calling.call(module, entry, args, dict(zip(values, xs)), setting)
            loss = tf.add_n([tf.reduce_sum(tf.cast(y, tf.float32) * w) for y, w in zip(ys, ws)])
        sources = [*xs, *extra.values()]
        grads = tape.gradient(loss, sources)
        return ys, [g if g is not None else tf.zeros_like(x) for g, x in zip(grads, sources)]

    tensors = [tf.constant(v) for v in values.values()]
    try:
        with calling.variables_as_defined(defined):
            if mode == "tf.function":
                ys, gs = calling.run_function_without_rewrites(tf, step, *tensors, autograph=False)
            else:
                ys, gs = step(*tensors)
        return [np.asarray(y) for y in ys], [np.asarray(g) for g in gs], len(made)
    finally:
        del made[base:]


def values(req: Request) -> Values | Unverifiable:
    plan = req.reference
    if plan is None:
        return Unverifiable("no reference run to repeat")
    entry = req.entry
    written = req.written
    module, finder = load(req.path, req.source, req.roots, req.migrated)
    _WRITTEN["path"] = module.__file__ if written is not None else None
    _WRITTEN["lines"] = frozenset(written or ())
    block = None
    try:
        made: list = []
        first = plan["variables"][0] if plan["variables"] else []
        with calling.fresh_gradient_registry():
            try:
                with calling.TF.variable_creator_scope(_creator(made, first)):
                    block = calling.define(module, finder, req, "migrated")
            except GIVE_UP as exc:
                return Unverifiable(str(exc))
            except Exception as exc:  # noqa: BLE001 - the user's code, any error
                return _definitions_failed(exc, module, block)
            name = calling.entry_name(entry)
            if entry["kind"] != "block" and name not in module.__dict__:
                needed = explain_missing_name(module, name)
                if needed is not None:  # bound by a statement verification does not run, or a star-import
                    return Unverifiable(str(needed))
                return Values((), defined=False)
            args = entry["variants"][plan["variant"]]
            defined = calling.defined_variables()
            runs: list[ModeError | ModeValues] = []
            for mode in MODES:
                for index, setting in enumerate(plan["settings"]):
                    try:
                        ys, gs, count = _run(module, entry, args, plan["shape"], setting, plan["variables"][index],
                                             plan["y_shapes"][index], mode, made, defined)
                    except Exception as exc:  # noqa: BLE001 - the user's code, any error
                        runs.append(_error(exc, mode, index, module, block))
                        break  # this mode stops at its first error
                    runs.append(ModeValues(mode, index, tuple(calling.array(y) for y in ys),
                                           tuple(calling.array(g) for g in gs), count))
            return Values(tuple(runs))
    finally:
        _WRITTEN["path"] = None
        forget(finder)


def _definitions_failed(exc: BaseException, module: types.ModuleType, block: str | None) -> Values:
    """The migrated module's definitions raised: an error of its first mode (for the verdict)."""
    return Values((_error(exc, "eager", 0, module, block),))


def _error(exc: BaseException, mode: str, index: int, module: types.ModuleType, block: str | None) -> ModeError:
    missing = None
    try:
        give_up_on(exc, module)
    except (MissingDependency, ScriptCodeNeeded) as found:
        missing = str(found)
    except GIVE_UP as found:
        missing = str(found)
    frames = traceback.extract_tb(exc.__traceback__)
    lines = tuple(f.lineno for f in frames if f.filename == module.__file__ and f.lineno)
    block_lines = tuple(f.lineno for f in frames if block is not None and f.filename == block and f.lineno)
    return ModeError(mode, index, missing or describe(exc), lines, block_lines, missing)


def answer(req: Request) -> Values | Unverifiable:
    return values(req)
