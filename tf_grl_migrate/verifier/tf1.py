"""The TF1 side, in a worker's child: TF1 semantics as the differential tests give legacy code
(``sys.modules["tensorflow"]`` is ``tensorflow.compat.v1`` with eager execution off; names removed
in TF 1.0 are what TF's own 1.0 upgrader renamed them to; Keras 2's ``keras.engine`` and backend
names), then the original called in a fresh graph and differentiated with
``tf.compat.v1.gradients`` in a Session: the reference values (``protocol.Ran``)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
from collections.abc import Sequence
from typing import Any

from . import calling
from .calling import GIVE_UP, describe, give_up_on, inputs, settings, upstream
from .loading import STAND_INS, forget, load
from .protocol import Kind, Param, Ran, Request, RunValues, Setting, Unverifiable


def setup() -> None:
    """Make this process TF1: compat.v1 as ``tensorflow``, graph mode, TF1's removed names."""
    import tensorflow as tf

    calling.TF, calling.MODE = tf, "tf1"
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    sys.modules["tensorflow"] = tf1
    sys.meta_path.append(_TF1Submodules())
    provide_pre_1_0_names(tf1, tf)
    provide_keras_2_engine()


def provide_pre_1_0_names(tf1: types.ModuleType, real_tf: types.ModuleType) -> None:
    """Pre-1.0 files (``tf.neg``) run as they did: each name TensorFlow 1.0 removed is the object
    TF's own upgrade script renamed it to (the generated table the migrator uses); the hidden ops'
    wrappers have their underscored TF1 names (``gen_nn_ops._relu_grad``) too."""
    from ..knowledge import _tf_renames, ops

    for module_name in ops.HIDDEN_OP_MODULES:  # gen_nn_ops._relu_grad, as TensorFlow up to 1.4 named it
        module = importlib.import_module(module_name)
        for name in [n for n in dir(module) if not n.startswith("_")]:
            if not hasattr(module, "_" + name):
                setattr(module, "_" + name, getattr(module, name))
    for old, new in _tf_renames.RENAMED.items():
        if "." not in old and not hasattr(tf1, old):
            target = real_tf
            try:
                for part in new.split("."):
                    target = getattr(target, part)
            except AttributeError:
                continue
            setattr(tf1, old, target)


def keras_as_tf1_had_it(tf: types.ModuleType | None = None) -> None:
    """``keras.backend.get_session()`` as TF1's Keras had it: a session on the default graph
    (``keras.backend``, ``tf.keras.backend``: whichever the code imported); and Keras 2's
    ``variable``, ``get_value`` and ``set_value`` on a backend that lacks them (Keras 3's)."""
    tf1 = (tf or calling.TF).compat.v1
    legacy = tf1.keras.backend
    for name, backend in list(sys.modules.items()):
        if not name.endswith("keras.backend") or backend is None:
            continue
        try:
            if not hasattr(backend, "get_session"):
                setattr(backend, "get_session", lambda: tf1.Session(graph=tf1.get_default_graph()))
            for attr in ("variable", "get_value", "set_value"):
                if not hasattr(backend, attr):
                    setattr(backend, attr, getattr(legacy, attr))
        except (AttributeError, TypeError):
            pass


KERAS_2_ENGINE = ("keras.engine", "keras.engine.topology", "keras.engine.base_layer", "keras.engine.input_spec")


def provide_keras_2_engine() -> None:
    """``from keras.engine import Layer`` (or ``.topology``, ``.base_layer``) as Keras 2 had it,
    where Keras 3 removed it: those modules hold Keras's ``Layer`` and ``InputSpec``."""
    import keras

    if "keras.engine" in sys.modules or importlib.util.find_spec("keras.engine") is not None:
        return  # a Keras that has it
    for name in KERAS_2_ENGINE:
        module = types.ModuleType(name)
        setattr(module, "Layer", keras.layers.Layer)
        setattr(module, "InputSpec", keras.layers.InputSpec)
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, module)


class _TF1Submodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Under TF1 semantics ``tensorflow`` is ``tensorflow.compat.v1``: ``import tensorflow.keras``
    (or ``from tensorflow.keras.layers import ...``) finds what that module's attribute holds, as
    TF1's own package had it. Last on the path: real submodules (``tensorflow.python``) go first."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("tensorflow."):
            return None
        obj: Any = sys.modules["tensorflow"]
        for part in fullname.split(".")[1:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        if not isinstance(obj, types.ModuleType):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(obj, "__path__"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        obj = sys.modules["tensorflow"]
        for part in spec.name.split(".")[1:]:
            obj = getattr(obj, part)
        return obj

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _random_ops(graph: Any) -> list[str]:
    """Ops that draw random numbers (a seeded stateless op is a function of its seed, not random):
    two runs that happen to agree prove nothing (``sign(x + u)`` agrees wherever x is far from 0)."""
    return [op.type for op in graph.get_operations()
            if not op.type.startswith("Stateless")
            and any(word in op.type for word in ("Random", "Multinomial", "TruncatedNormal", "Shuffle"))]


def run_once(req: Request, args: Sequence[Param], shape: Sequence[int], setting: Setting,
             side: str = "original") -> RunValues:
    """One call in a fresh graph, the module's definitions loaded in that graph (a module-level
    ``G = tf.get_default_graph()`` or ``tf.Variable`` belongs to the graph the call runs in, as
    in the legacy program)."""
    import numpy as np

    tf1 = calling.TF.compat.v1
    entry = req.entry
    values = inputs(args, shape, entry)
    module, finder = load(req.path, req.source, req.roots)
    try:
        with calling.fresh_gradient_registry(), tf1.Graph().as_default():
            try:
                calling.define(module, finder, req, side, keras_as_tf1_had_it)
                if entry["kind"] != "block":
                    calling.entry_object(module, entry)
                tensors = {k: tf1.constant(v) for k, v in values.items()}
                ys = calling.call(module, entry, args, tensors, setting)
            except Exception as exc:
                give_up_on(exc, module)
                raise
            tensors.update(calling.module_inputs(module, entry, side))
            with tf1.Session(config=calling.session_config_without_rewrites(tf1)) as sess:
                sess.run(tf1.global_variables_initializer())
                var_values = sess.run(tf1.global_variables())
                y_values = sess.run(ys)
                ws = [tf1.constant(upstream(list(np.shape(v)))) for v in y_values]
                loss = tf1.add_n([tf1.reduce_sum(tf1.cast(y, tf1.float32) * w) for y, w in zip(ys, ws)])
                grads = tf1.gradients(loss, list(tensors.values()))
                grads = [g if g is not None else tf1.zeros_like(t) for g, t in zip(grads, tensors.values())]
                first = sess.run([ys, grads])
                again = sess.run([ys, grads])
                drawn = _random_ops(tf1.get_default_graph())
    finally:
        forget(finder)
    same = not drawn and all(np.array_equal(a, b, equal_nan=True)
                             for a, b in zip(first[0] + first[1], again[0] + again[1]))
    return RunValues(setting, tuple(calling.array(v) for v in first[0]), tuple(calling.array(v) for v in first[1]),
                     tuple(calling.array(v) for v in var_values), same, tuple(drawn))


def reference(req: Request) -> Ran | Unverifiable:
    """The TF1 values for the first way of calling (from ``req.first_variant`` on), way of making
    the instance (``__init__`` with numbers for arguments nothing gives, else none) and input shape
    that run; the parameters' second values too where they run."""
    errors = []
    entry = req.entry
    news = [False, True] if entry.get("missing") else [False]
    try:
        for index, new, args in [(i, n, a) for i, a in enumerate(entry["variants"]) for n in news
                                 if i >= req.first_variant]:
            for shape in req.shapes:
                results = []
                for setting in settings(args, new):
                    try:
                        results.append(run_once(req, args, shape, setting))
                    except GIVE_UP:
                        raise
                    except Exception as exc:  # noqa: BLE001 - the user's code, any error
                        errors.append(describe(exc))
                        break
                if not results:
                    continue
                note = None
                if STAND_INS:
                    note = (f"with a stand-in for {', '.join(sorted(STAND_INS))} (not installed) as a base class; "
                            "the code under test ran on its own methods")
                if len(results) < len(settings(args, new)):
                    from .verdict import setting_text

                    note = "; ".join(filter(None, [note, f"tried only {setting_text(results[0].setting)}: the "
                                                         f"second values raised under TF1 ({errors[-1]})"]))
                if not all(r.deterministic for r in results):
                    drawn = (
                        ", ".join(sorted(set(d for r in results for d in r.drawn)))
                        or "two runs of the same graph differ"
                    )
                    return Unverifiable(f"the forward or backward pass draws random numbers ({drawn}), so TF1 and "
                                        "TF2 cannot be compared value for value")
                return Ran(index, new, tuple(shape), tuple(results), note)
        shown = list(dict.fromkeys(e[:240] for e in errors))
        missing = entry.get("missing")
        made = f" (the instance was made without __init__: no value for {', '.join(missing)})" if missing else ""
        return Unverifiable("the callable raised: " + "; ".join(shown[:2]) + made
                            + f" (tried inputs of shapes {', '.join(str(list(s)) for s in req.shapes)})")
    except GIVE_UP as exc:
        return Unverifiable(str(exc))


def same_run(req: Request) -> Ran | Unverifiable:
    """The migrated text under TF1 semantics, called as the reference was (same way, shape and
    values): its values, for the main process to set beside the original's."""
    plan = req.reference
    if plan is None:
        return Unverifiable("no reference run to repeat")
    args = req.entry["variants"][plan["variant"]]
    results = []
    for setting in plan["settings"]:
        try:
            results.append(run_once(req, args, plan["shape"], setting, side="migrated"))
        except Exception as exc:  # noqa: BLE001 - the user's code, any error
            return Unverifiable(describe(exc))
    return Ran(plan["variant"], plan["new"], tuple(plan["shape"]), tuple(results))


def answer(req: Request) -> Ran | Unverifiable:
    return same_run(req) if req.kind is Kind.TF1_SAME else reference(req)
