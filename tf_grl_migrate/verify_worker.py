"""A verification worker: ``python -m tf_grl_migrate.verify_worker tf1|tf2 MEMORY_CAP``.

Started by :mod:`tf_grl_migrate.verification` with ``--verify`` / ``--verify-against`` only. It imports
TensorFlow once, then answers one JSON request a line on stdin with one JSON line on stdout:

- ``tf1``: TF1 semantics, as the differential tests run legacy code: ``sys.modules["tensorflow"]``
  is ``tensorflow.compat.v1`` with eager execution off, names removed in TF 1.0 are what TF's own
  1.0 upgrader renamed them to, and ``keras.backend.get_session()`` is what TF1's Keras had. It
  loads the original module's slice (imports and the definitions the callable needs, never script
  code), calls the callable in a fresh graph and takes ``tf.compat.v1.gradients`` in a Session;
- ``tf2``: the migrated module under TensorFlow 2, the same call eagerly and in ``tf.function``,
  with the same inputs and upstream gradient, compared with the TF1 answer it is sent.

Safety: an address-space cap, no network (sockets refuse to connect), the working directory and
TMPDIR a temporary folder, no GPU (``CUDA_VISIBLE_DEVICES=-1``), graph rewrites off (grappler's
kernel fusions round differently from the ops they fuse). The user's own prints go to /dev/null:
stdout carries only answers.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import socket
import sys
import traceback
import types

from .verify_loading import STAND_INS, MissingDependency, forget, run_definitions
from .verify_loading import load as _load


def _no_network():
    def refuse(*args, **kwargs):
        raise OSError("verification runs without network access")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse


def _limit_memory(cap: int):
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):  # not on this platform
        pass


# ---------------------------------------------------------------------------------------------
# TensorFlow, per mode

TF = None  # the real tensorflow module
MODE = None


def _gradient_registry() -> dict:
    """TensorFlow's registry of gradient functions by name (the one TF internal used here: each
    request forgets what its code registered, as a fresh process would)."""
    from tensorflow.python.framework import ops

    return ops._gradient_registry._registry


class fresh_gradient_registry:  # noqa: N801 - a context manager
    """Forget the gradient names registered inside, as a fresh process would (the same code is
    loaded again for each way of calling, and registers the same names; the differential tests'
    cases reuse names too)."""

    def __enter__(self):
        self.before = set(_gradient_registry())

    def __exit__(self, *exc):
        registry = _gradient_registry()
        for name in set(registry) - self.before:
            del registry[name]


def _setup(mode: str):
    global TF, MODE
    import tensorflow as tf

    TF, MODE = tf, mode
    if mode == "tf1":
        tf1 = tf.compat.v1
        tf1.disable_eager_execution()
        sys.modules["tensorflow"] = tf1
        sys.meta_path.append(_TF1Submodules())
        provide_pre_1_0_names(tf1, tf)
        provide_keras_2_engine()
    else:
        _tf1_fallback(tf)


def provide_pre_1_0_names(tf1, real_tf):
    """Pre-1.0 files (``tf.neg``) run as they did: each name TensorFlow 1.0 removed is the object
    TF's own upgrade script renamed it to (the generated table the migrator uses); the hidden ops'
    wrappers have their underscored TF1 names (``gen_nn_ops._relu_grad``) too."""
    from . import _tf_renames, ops

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


_WRITTEN: dict = {"path": None, "lines": frozenset()}


def _tf1_fallback(tf):
    """Under TF2, a TF1 name in code the tool did not touch (``tf.variable_scope`` beside a
    migrated site) is ``tf.compat.v1``'s, as ``tf_upgrade_v2`` would write it: the migrator leaves
    other TF1 API to that tool. In the lines the tool wrote, TF2's own answer (AttributeError)."""

    def fallback(name):
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


def keras_as_tf1_had_it(tf=None):
    """``keras.backend.get_session()`` as TF1's Keras had it: a session on the default graph
    (``keras.backend``, ``tf.keras.backend``: whichever the code imported); and Keras 2's
    ``variable``, ``get_value`` and ``set_value`` on a backend that lacks them (Keras 3's)."""
    tf1 = (tf or TF).compat.v1
    legacy = tf1.keras.backend
    for name, backend in list(sys.modules.items()):
        if not name.endswith("keras.backend") or backend is None:
            continue
        try:
            if not hasattr(backend, "get_session"):
                backend.get_session = lambda: tf1.Session(graph=tf1.get_default_graph())
            for attr in ("variable", "get_value", "set_value"):
                if not hasattr(backend, attr):
                    setattr(backend, attr, getattr(legacy, attr))
        except (AttributeError, TypeError):
            pass


KERAS_2_ENGINE = ("keras.engine", "keras.engine.topology", "keras.engine.base_layer", "keras.engine.input_spec")


def provide_keras_2_engine():
    """``from keras.engine import Layer`` (or ``.topology``, ``.base_layer``) as Keras 2 had it,
    where Keras 3 removed it: those modules hold Keras's ``Layer`` and ``InputSpec``."""
    import keras

    if "keras.engine" in sys.modules or importlib.util.find_spec("keras.engine") is not None:
        return  # a Keras that has it
    for name in KERAS_2_ENGINE:
        module = types.ModuleType(name)
        module.Layer, module.InputSpec = keras.layers.Layer, keras.layers.InputSpec
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, module)


def _after_each():
    """What runs after each statement of the user's code is executed: TF1's Keras names."""
    return keras_as_tf1_had_it if MODE == "tf1" else None


def load(path, source, roots, migrated=None):
    """The user's module for ``path``'s text (``verify_loading.load``), named for this worker."""
    return _load(path, source, roots, migrated, MODE, _after_each())


class _TF1Submodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Under TF1 semantics ``tensorflow`` is ``tensorflow.compat.v1``: ``import tensorflow.keras``
    (or ``from tensorflow.keras.layers import ...``) finds what that module's attribute holds, as
    TF1's own package had it. Last on the path: real submodules (``tensorflow.python``) go first."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("tensorflow."):
            return None
        obj = sys.modules["tensorflow"]
        for part in fullname.split(".")[1:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        if not isinstance(obj, types.ModuleType):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(obj, "__path__"))

    def create_module(self, spec):
        obj = sys.modules["tensorflow"]
        for part in spec.name.split(".")[1:]:
            obj = getattr(obj, part)
        return obj

    def exec_module(self, module):
        pass


# ---------------------------------------------------------------------------------------------
# Exercising the callable


def inputs(args, shape, entry=None):
    """The float32 inputs of one way of calling: a tensor per tensor parameter, ``count`` for a
    parameter unpacked into several; ``x`` alone for a function that returns the function to call.
    A block's: one per name it reads, one per attribute of an object it reads."""
    import numpy as np

    rng = np.random.default_rng(1234)
    if entry is not None and entry["kind"] == "block":
        names = list(entry["tensors"]) + [f"{o}.{a}" for o, attrs in entry["objects"].items() for a in attrs]
    else:
        names = []
        for a in args:
            if a["kind"] == "tensor":
                names.append(a["name"])
            elif a["kind"] == "tensors":
                names += [f"{a['name']}[{i}]" for i in range(a["count"])]
        names = names or ["x"]
    return {n: rng.uniform(-2.0, 2.0, size=shape).astype(np.float32) for n in names}


def upstream(shape):
    import numpy as np

    n = int(np.prod(shape)) if len(shape) else 1
    return np.linspace(-1.5, 2.0, n, dtype=np.float32).reshape(shape)


def settings(args, new: bool = False) -> list:
    """Parameter values to try: every first value, then every number at its second value.
    ``new``: the instance is made without ``__init__``."""
    values = [a for a in args if a["kind"] == "value"]
    first = {a["name"]: a["values"][0] for a in values}
    if new:
        first["__grl_new__"] = True
    out = [first]
    second = {a["name"]: a["values"][1] for a in values if len(a["values"]) > 1}
    if second:
        out.append({**first, **second})
    return out


class NoTensor(Exception):
    pass


def call(module, entry, args, tensors: dict, setting: dict):
    """The callable's float outputs (a list of tensors)."""
    tf = TF
    if entry["kind"] == "block":
        return _call_block(module, entry, tensors)
    positional, kwargs = [], {}
    by_keyword = False  # positionally up to the first parameter left to its default (a function under
    for a in args:  # tf.custom_gradient takes gradients only for positional arguments), by keyword after
        if a["kind"] == "default":
            by_keyword = True
            continue
        if a["kind"] == "tensor":
            value = tensors[a["name"]]
        elif a["kind"] == "tensors":
            value = [tensors[f"{a['name']}[{i}]"] for i in range(a["count"])]
        else:
            value = setting[a["name"]]
        if by_keyword or a.get("keyword"):
            kwargs[a["name"]] = value
        else:
            positional.append(value)
    target = getattr(module, entry["name"])
    if entry["kind"] == "class":
        for outer, inner in zip(entry["classes"], entry["classes"][1:]):
            target = getattr(target, _mangled(outer, inner))
        if entry.get("static"):
            target = getattr(target, entry["method"])
        else:
            if setting.get("__grl_new__"):  # no value for a required argument: an instance without __init__
                instance = target.__new__(target)
            else:
                instance = target(**{a["name"]: a["values"][0] for a in entry["init"] if a["kind"] == "value"})
            target = instance if entry["method"] == "__call__" else getattr(
                instance, _mangled(entry["classes"][-1], entry["method"]))
    out = target(*positional, **kwargs)
    funcs = out if isinstance(out, (list, tuple)) and out and all(callable(f) for f in out) else None
    if callable(out) and not tf.is_tensor(out) and not isinstance(out, tf.Variable):
        funcs = [out]
    if funcs is not None:  # a site in a closure: the function returned calls it
        first = next(iter(tensors.values()))
        out = [f(first) for f in funcs]
    return _float_tensors(out, f"it returned {type(out).__name__}")


def _float_tensors(out, what) -> list:
    flat = [t for t in TF.nest.flatten(out) if (TF.is_tensor(t) or isinstance(t, TF.Variable)) and t.dtype.is_floating]
    if not flat:
        raise NoTensor(f"{what}, no float tensor to take gradients of")
    return flat


def _call_block(module, entry, tensors):
    fn = module.__dict__["__grl_block__"]
    kwargs = {n: tensors[n] for n in entry["tensors"]}
    for obj, attrs in entry["objects"].items():
        kwargs[obj] = types.SimpleNamespace(**{a: tensors[f"{obj}.{a}"] for a in attrs})
    graph = TF.compat.v1.get_default_graph() if MODE == "tf1" else None
    out = fn(graph, **kwargs)
    if isinstance(out, dict) and out.get("__grl_block__"):
        out = [out[name] for name in entry["outputs"]]
    return _float_tensors(out, "the block leaves")


def _define(module, finder, req, side):
    """Run the module's definitions that the entry needs (for a block, what ``side`` of it reads,
    then the block itself as ``__grl_block__``); the block's file, or None."""
    entry = req["entry"]
    wanted = set(entry[side]["reads"]) if entry["kind"] == "block" else {entry["name"]}
    run_definitions(module, req["source"], module.__file__, wanted, _after_each(), finder.project)
    return _load_block(module, entry, side) if entry["kind"] == "block" else None


def _load_block(module, entry, side):
    """The block (or the lines the migration put in its place) as ``__grl_block__`` in the
    module's namespace, compiled from a file of its own (autograph reads the source back)."""
    import tempfile

    source = entry[side]["source"]
    path = os.path.join(tempfile.gettempdir(), module.__name__, "__grl_block__.py")  # the module's own folder
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    exec(compile(source, path, "exec"), module.__dict__)
    return path


def _module_inputs(module, entry, side) -> dict:
    """Float tensors and variables of the module that a block reads (a module-level
    ``tf.Variable``): the gradient is taken with respect to them too."""
    if entry["kind"] != "block":
        return {}
    out = {}
    for name in entry[side]["reads"]:
        value = module.__dict__.get(name)
        if (TF.is_tensor(value) or isinstance(value, TF.Variable)) and value.dtype.is_floating:
            out[f"module.{name}"] = value
    return out


def _mangled(cls, name):
    """``self.__quantize`` is stored as ``_Class__quantize``."""
    if name.startswith("__") and not name.endswith("__"):
        return f"_{cls.lstrip('_')}{name}"
    return name


def session_config_without_rewrites(tf1):
    """A TF1 Session config with grappler off: its fusions (MatMul+Add+Sigmoid in one kernel)
    round 1 ulp differently from the ops they fuse, the optimizer's doing, not TF1's semantics.
    (The differential tests use it too: one engine of proof.)"""
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrites = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
    return tf1.ConfigProto(graph_options=tf1.GraphOptions(rewrite_options=rewrites))


def run_function_without_rewrites(tf, fn, *args):
    """``tf.function(fn)(*args)`` with grappler off, as for the TF1 Session (options restored)."""
    options = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        return tf.function(fn)(*args)
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False, **options})


def run_tf1(req, args, shape, setting, side="original"):
    """One call in a fresh graph, the module's definitions loaded in that graph (a module-level
    ``G = tf.get_default_graph()`` or ``tf.Variable`` belongs to the graph the call runs in, as
    in the legacy program)."""
    import numpy as np

    tf1 = TF.compat.v1
    entry = req["entry"]
    values = inputs(args, shape, entry)
    module, finder = load(req["path"], req["source"], req.get("roots", []))
    try:
        with fresh_gradient_registry(), tf1.Graph().as_default():
            _define(module, finder, req, side)
            if entry["kind"] != "block" and not hasattr(module, entry["name"]):
                raise NotDefined(f"{entry['name']} is not defined by the module's definitions alone "
                                 "(script code makes it)")
            tensors = {k: tf1.constant(v) for k, v in values.items()}
            ys = call(module, entry, args, tensors, setting)
            tensors.update(_module_inputs(module, entry, side))
            with tf1.Session(config=session_config_without_rewrites(tf1)) as sess:
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
    return {"y": [np.asarray(v).tolist() for v in first[0]], "g": [np.asarray(v).tolist() for v in first[1]],
            "variables": [np.asarray(v).tolist() for v in var_values], "deterministic": same, "drawn": drawn}


class NotDefined(Exception):
    pass


def _random_ops(graph) -> list:
    """Ops that draw random numbers (a seeded stateless op is a function of its seed, not random):
    two runs that happen to agree prove nothing (``sign(x + u)`` agrees wherever x is far from 0)."""
    return [op.type for op in graph.get_operations()
            if not op.type.startswith("Stateless")
            and any(word in op.type for word in ("Random", "Multinomial", "TruncatedNormal", "Shuffle"))]


_GIVE_UP = (MissingDependency, NoTensor, NotDefined)


def tf1_reference(req):
    """The TF1 answer for the first way of calling, way of making the instance (``__init__`` with
    numbers for arguments nothing gives, else none) and input shape that run; the parameters'
    second values too where they run."""
    errors = []
    news = [False, True] if req["entry"].get("missing") else [False]
    try:
        for index, new, args in [(i, n, a) for i, a in enumerate(req["entry"]["variants"]) for n in news]:
            for shape in req["shapes"]:
                results = []
                for setting in settings(args, new):
                    try:
                        results.append({"setting": setting, **run_tf1(req, args, shape, setting)})
                    except _GIVE_UP:
                        raise
                    except Exception as exc:  # noqa: BLE001 - the user's code, any error
                        _give_up_on(exc)
                        errors.append(_describe(exc))
                        break
                if not results:
                    continue
                note = None
                if STAND_INS:
                    note = (f"with a stand-in for {', '.join(sorted(STAND_INS))} (not installed) as a base class; "
                            "the code under test ran on its own methods")
                if len(results) < len(settings(args, new)):
                    note = "; ".join(filter(None, [note, f"tried only {_setting(results[0]['setting'])}: the "
                                                         f"second values raised under TF1 ({errors[-1]})"]))
                if not all(r["deterministic"] for r in results):
                    return {"status": "not_verifiable",
                            "reason": "the forward or backward pass draws random numbers (" + (
                                ", ".join(sorted(set(d for r in results for d in r["drawn"]))) or
                                "two runs of the same graph differ") + "), so TF1 and TF2 cannot be compared "
                                                                       "value for value"}
                return {"status": "ok", "variant": index, "new": new, "shape": shape, "results": results,
                        "note": note}
        shown = list(dict.fromkeys(e[:240] for e in errors))
        missing = req["entry"].get("missing")
        made = (f" (the instance was made without __init__: no value for {', '.join(missing)})" if missing else "")
        return {"status": "not_verifiable", "reason": "the callable raised: " + "; ".join(shown[:2]) + made
                + f" (tried inputs of shapes {', '.join(str(list(s)) for s in req['shapes'])})"}
    except _GIVE_UP as exc:
        return {"status": "not_verifiable", "reason": str(exc)}


def tf1_same(req):
    """The migrated text under TF1 semantics, called as the original was (same way, shape and
    values), against the original's TF1 answer ``compare_to``: "same" means a difference under
    TF2 comes from TF2's meaning for code the migration did not change, not from the migration."""
    import numpy as np

    reference = req["compare_to"]
    args = req["entry"]["variants"][reference["variant"]]
    (f_rtol, f_atol), (g_rtol, g_atol) = req["tolerance"]["forward"], req["tolerance"]["gradient"]
    for result in reference["results"]:
        try:
            mine = run_tf1(req, args, reference["shape"], result["setting"], side="migrated")
        except Exception as exc:  # noqa: BLE001 - the user's code, any error
            return {"status": "failed", "reason": _describe(exc)}
        pairs = [(mine["y"], result["y"], f_rtol, f_atol), (mine["g"], result["g"], g_rtol, g_atol)]
        for got, want, rtol, atol in pairs:
            if len(got) != len(want):
                return {"status": "different"}
            for a, b in zip(got, want):
                if np.shape(a) != np.shape(b) or _deviation(a, b, rtol, atol)[1]:
                    return {"status": "different"}
    return {"status": "same"}


def _deviation(got, want, rtol, atol) -> tuple[float, int]:
    """(largest |got - want|, how many elements lie outside atol + rtol * |want|); NaN where both
    are NaN counts as equal."""
    import numpy as np

    got64, want64 = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got64) & np.isnan(want64)
    diff = np.where(both_nan, 0.0, np.abs(got64 - want64))
    bad = ~(diff <= atol + rtol * np.abs(want64)) & ~both_nan
    return (float(np.max(diff)) if diff.size else 0.0), int(bad.sum())


def _give_up_on(exc):
    """Raise what ends the attempt whatever the shape: a missing module (also one the code
    imports as it runs, or TensorFlow wraps)."""
    missing = _missing_in(exc)
    if missing is not None:
        raise missing from None
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        raise MissingDependency(exc.name) from None


def _missing_in(exc):
    """A MissingDependency, possibly wrapped by TensorFlow or autograph on the way out."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, MissingDependency):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _setting(setting) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in setting.items() if not k.startswith("__grl")) or "the defaults"


def _describe(exc) -> str:
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if text and text[0].startswith("in user code:"):  # autograph's wrapping: the error is last
        text = text[-1:]
        if text[0].split(":")[0].isidentifier():  # "ValueError: ..." already names the type
            return text[0][:240]
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _creator(made: list, reference: list):
    """A variable creator that records each variable made and starts the k-th as TF1's k-th
    started (its initialiser may be random)."""
    import numpy as np

    tf = TF

    def creator(next_creator, **kwargs):
        k = len(made)
        if k < len(reference):
            initial = np.asarray(reference[k], np.float32)
            kwargs["initial_value"] = lambda: tf.constant(initial)
        v = next_creator(**kwargs)
        made.append(v)
        return v

    return creator


def run_tf2(module, entry, args, shape, result, mode, made):
    import numpy as np

    tf = TF
    values = inputs(args, shape, entry)
    extra = _module_inputs(module, entry, "migrated")
    ws = [tf.constant(upstream(list(np.shape(y)))) for y in result["y"]]
    base = len(made)  # those the module's definitions made
    creator = _creator(made, result["variables"])

    def step(*xs):
        with tf.variable_creator_scope(creator), tf.GradientTape() as tape:
            for x in [*xs, *extra.values()]:
                tape.watch(x)
            ys = call(module, entry, args, dict(zip(values, xs)), result["setting"])
            loss = tf.add_n([tf.reduce_sum(tf.cast(y, tf.float32) * w) for y, w in zip(ys, ws)])
        sources = [*xs, *extra.values()]
        grads = tape.gradient(loss, sources)
        return ys, [g if g is not None else tf.zeros_like(x) for g, x in zip(grads, sources)]

    tensors = [tf.constant(v) for v in values.values()]
    try:
        if mode == "tf.function":
            ys, gs = run_function_without_rewrites(tf, step, *tensors)
        else:
            ys, gs = step(*tensors)
        return [np.asarray(y) for y in ys], [np.asarray(g) for g in gs], len(made)
    finally:
        del made[base:]


def compare(req, reference, module, made):
    """Each TF1 result against TF2's, eagerly and in tf.function: the first difference, or the
    largest deviation. A mode that raises in code the migration did not change (other TF1 API:
    ``w.op.name`` has no meaning eagerly) is left out, with a note, when another mode verifies."""
    import numpy as np

    (f_rtol, f_atol), (g_rtol, g_atol) = req["tolerance"]["forward"], req["tolerance"]["gradient"]
    args = req["entry"]["variants"][reference["variant"]]
    names = list(inputs(args, [1], req["entry"])) + list(_module_inputs(module, req["entry"], "migrated"))
    worst, skipped, ran = 0.0, [], 0
    for mode in ("eager", "tf.function"):
        for result in reference["results"]:
            where = f"{mode}, {_setting(result['setting'])}"
            try:
                ys, gs, count = run_tf2(module, req["entry"], args, reference["shape"], result, mode, made)
            except _GIVE_UP:
                raise
            except Exception as exc:  # noqa: BLE001 - the user's code, any error
                _give_up_on(exc)
                failure = _tf2_failure(exc, module.__file__, req.get("written"))
                if failure["status"] == "differs":
                    return {**failure, "reason": f"{where}: {failure['reason']}"}
                skipped.append((mode, failure["reason"]))
                break
            if count != len(result["variables"]):
                return {"status": "not_verifiable",
                        "reason": f"the migrated code makes {count} variables where TF1 made "
                                  f"{len(result['variables'])}, so their initial values cannot be matched"}
            if len(ys) != len(result["y"]):
                return {"status": "differs", "reason": f"{where}: {len(ys)} outputs where TF1 gave {len(result['y'])}"}
            pairs = [("forward value", y, np.asarray(r, dtype=y.dtype), f_rtol, f_atol) for y, r in zip(ys, result["y"])]
            pairs += [(f"gradient of {n}", g, np.asarray(r, np.float32), g_rtol, g_atol)
                      for n, g, r in zip(names, gs, result["g"])]
            for what, got, want, rtol, atol in pairs:
                if got.shape != want.shape:
                    return {"status": "differs", "reason": f"{where}: {what} has shape {list(got.shape)}, "
                                                           f"TF1's {list(want.shape)}"}
                d, bad = _deviation(got, want, rtol, atol)
                worst = max(worst, d)
                if bad:
                    return {"status": "differs", "max_abs_diff": d,
                            "reason": f"{where}: {what} differs from TF1's (max |diff| {d:.3g}, "
                                      f"{bad} of {got.size} elements)"}
            ran += 1
    if not ran:
        return {"status": "not_verifiable", "reason": skipped[0][1]}
    answer = {"status": "verified", "max_abs_diff": worst}
    if skipped:
        answer["note"] = "; ".join(f"{m} not run: {why}" for m, why in skipped)
    return answer


def tf2_check(req):
    reference = req["reference"]
    written = req.get("written")
    module, finder = load(req["path"], req["source"], req.get("roots", []), req.get("migrated"))
    _WRITTEN["path"] = module.__file__ if written is not None else None
    _WRITTEN["lines"] = frozenset(written or ())
    try:
        made: list = []
        first = reference["results"][0]["variables"] if reference["results"] else []
        entry = req["entry"]
        with TF.variable_creator_scope(_creator(made, first)):
            block = _define(module, finder, req, "migrated")
        if block is not None and written is not None:  # the block file's lines: the migrated text's from "first" on
            lines = entry["migrated"]["source"].count("\n")
            _WRITTEN["block"] = (block, {k for k in range(2, lines + 1)
                                         if k == lines or entry["migrated"]["first"] + k - 2 in set(written)})
        if entry["kind"] != "block" and not hasattr(module, entry["name"]):
            return {"status": "differs", "reason": f"the migrated module defines no {req['entry']['name']}"}
        return compare(req, reference, module, made)
    except _GIVE_UP as exc:
        return {"status": "not_verifiable", "reason": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the user's code, any error
        try:
            _give_up_on(exc)
        except MissingDependency as missing:
            return {"status": "not_verifiable", "reason": str(missing)}
        return _tf2_failure(exc, module.__file__, written)
    finally:
        _WRITTEN["path"] = None
        _WRITTEN.pop("block", None)
        forget(finder)


def _tf2_failure(exc, path, written):
    """An exception under TF2 where TF1 ran: the tool's fault when it arises in a line the tool
    wrote (or anywhere in a hand migration); otherwise other TF1 API the migrator leaves alone."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    line = frames[-1].lineno if frames else None
    text = _describe(exc)
    if written is None:
        return {"status": "differs", "reason": f"raises under TF2 where the original ran under TF1: {text}"
                                               + (f" (line {line})" if line else "")}
    ours = [f.lineno for f in frames if f.lineno in set(written)]
    block, block_lines = _WRITTEN.get("block", (None, ()))
    ours += [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == block and f.lineno in block_lines]
    if ours:
        return {"status": "differs", "reason": f"raises in code the migration wrote (line {ours[-1]}) where the "
                                               f"original ran under TF1: {text}"}
    where = f" at line {line}" if line else ""
    return {"status": "not_verifiable", "reason": f"raises{where}, in code the migration did not change "
                                                  f"(other TF1 API is tf_upgrade_v2's job): {text}"}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    mode, cap = argv[0], int(argv[1]) if len(argv) > 1 else 0
    if cap:
        _limit_memory(cap)
    _no_network()
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w")
    try:
        _setup(mode)
    except Exception as exc:  # noqa: BLE001
        answers.write(json.dumps({"error": f"TensorFlow could not be imported: {_describe(exc)}"}) + "\n")
        return 1
    answers.write(json.dumps({"tensorflow": TF.__version__, "mode": mode}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        STAND_INS.clear()
        try:
            with fresh_gradient_registry():
                if mode == "tf2":
                    answer = tf2_check(req)
                else:
                    answer = tf1_same(req) if "compare_to" in req else tf1_reference(req)
        except Exception as exc:  # noqa: BLE001 - never die on one request
            answer = {"status": "not_verifiable", "reason": "the definitions could not be loaded: " + _describe(exc)}
        answers.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
