"""How a worker's child calls the code under test, on either side: the inputs of one way of calling,
the upstream gradient, the values tried for number parameters, the call itself (a function, a
method of an instance, a block exercised alone, a model handed to a ``model_fn`` parameter), and
the errors that end an attempt. Imported in the child only, after TensorFlow (``TF``)."""

from __future__ import annotations

import contextlib
import os
import types
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .loading import MissingDependency, ScriptCodeNeeded
from .protocol import shape_of

if TYPE_CHECKING:
    import numpy as np

    from .loading import _ProjectFinder
    from .protocol import Array, Entry, Param, Request, Setting

TF: Any = None  # the real tensorflow module (set by the side that runs: tf1.py, tf2.py)
MODE: str | None = None  # "tf1" | "tf2"
_E = TypeVar("_E", bound=BaseException)


class NoTensor(Exception):
    pass


class NotDefined(Exception):
    pass


GIVE_UP = (MissingDependency, ScriptCodeNeeded, NoTensor, NotDefined)


def inputs(args: Sequence[Param], shape: Sequence[Any], entry: Entry | None = None) -> dict[str, np.ndarray]:
    """The float32 inputs of one way of calling: a tensor per tensor parameter, ``count`` for a
    parameter unpacked into several; ``x`` alone for a function that returns the function to call.
    A block's: one per name it reads, one per attribute of an object it reads. ``shape``: every
    input's, or a pair (the first input's, the others'; probes.SHAPES)."""
    import numpy as np

    rng = np.random.default_rng(1234)
    return {n: rng.uniform(-2.0, 2.0, size=shape_of(shape, i)).astype(np.float32)
            for i, n in enumerate(input_names(args, entry))}


def input_names(args: Sequence[Param], entry: Entry | None = None) -> list[str]:
    """The names of those inputs, in the order they are made (the main process names them too)."""
    if entry is not None and entry["kind"] == "block":
        return list(entry["tensors"]) + [f"{o}.{a}" for o, attrs in entry["objects"].items() for a in attrs]
    names: list[str] = []
    for a in args:
        if a["kind"] == "tensor":
            names.append(a["name"])
        elif a["kind"] == "tensors":
            names += [f"{a['name']}[{i}]" for i in range(a["count"])]
    return names or ["x"]


def upstream(shape: Sequence[int]) -> np.ndarray:
    """The upstream gradient (the differential tests use it too: one engine of proof)."""
    import numpy as np

    n = int(np.prod(shape)) if len(shape) else 1
    return np.linspace(-1.5, 2.0, n, dtype=np.float32).reshape(shape)


def settings(args: Sequence[Param], new: bool = False) -> list[Setting]:
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


def model(op_types: Sequence[str] | None) -> Callable[[Any], Any]:
    """A small model for a parameter the code calls (``model_fn(x)``), making the op types the
    site's map names, in order: TensorFlow's raw op of each type on what the last one made (a
    py_func of ``np.square`` for ``PyFunc``), after an affine step so that no input sits at a kink."""
    import numpy as np

    tf = TF

    def build(t: Any) -> Any:
        t = t * 1.5 - 0.25
        for op_type in op_types or ["Relu"]:
            if op_type in ("PyFunc", "PyFuncStateless"):
                t = tf.compat.v1.py_func(lambda a: np.square(a).astype(np.float32), [t], tf.float32,
                                         stateful=op_type == "PyFunc")
                continue
            from tensorflow.python.framework import op_def_registry

            definition = op_def_registry.get(op_type)
            raw = getattr(tf.raw_ops, op_type, None)
            if definition is None or raw is None or len(definition.input_arg) != 1:
                raise NotDefined(f"no model makes a {op_type!r} op for a parameter the code calls")
            t = raw(**{definition.input_arg[0].name: t})
        return t

    return build


def call(module: types.ModuleType, entry: Entry, args: Sequence[Param], tensors: dict[str, Any],
         setting: Setting) -> list[Any]:
    """The callable's float outputs (a list of tensors)."""
    tf = TF
    if entry["kind"] == "block":
        return _call_block(module, entry, tensors)
    positional: list[Any] = []
    kwargs: dict[str, Any] = {}
    by_keyword = False  # positionally up to the first parameter left to its default (a function under
    for a in args:  # tf.custom_gradient takes gradients only for positional arguments), by keyword after
        if a["kind"] == "default":
            by_keyword = True
            continue
        if a["kind"] == "tensor":
            value = tensors[a["name"]]
        elif a["kind"] == "tensors":
            value = [tensors[f"{a['name']}[{i}]"] for i in range(a["count"])]
        elif a["kind"] == "model":
            value = model(a.get("ops"))
        else:
            value = setting[a["name"]]
        if by_keyword or a.get("keyword"):
            kwargs[a["name"]] = value
        else:
            positional.append(value)
    target = entry_object(module, entry)
    if entry["kind"] == "class":
        if entry.get("static"):
            target = getattr(target, entry["method"])
        else:
            if setting.get("__grl_new__"):  # no value for a required argument: an instance without __init__
                instance = target.__new__(target)
            else:
                instance = target(**{a["name"]: a["values"][0] for a in entry["init"] if a["kind"] == "value"})
            target = instance if entry["method"] == "__call__" else getattr(
                instance, _mangled(entry["classes"][-1], entry["method"]))
    elif entry["kind"] == "instance" and entry["method"] != "__call__":  # a module-level instance's method
        target = getattr(target, entry["method"])
    out = target(*positional, **kwargs)
    funcs = out if isinstance(out, (list, tuple)) and out and all(callable(f) for f in out) else None
    if callable(out) and not tf.is_tensor(out) and not isinstance(out, tf.Variable):
        funcs = [out]
    if funcs is not None:  # a site in a closure: the function returned calls it
        first = next(iter(tensors.values()))
        out = [f(first) for f in funcs]
    return float_tensors(out, f"it returned {type(out).__name__}")


def entry_name(entry: Entry) -> str:
    """The module-level name the entry is reached through on this side (a hand port may call it
    otherwise: ``--verify-call``)."""
    return entry.get("port_name") or entry["name"] if MODE == "tf2" else entry["name"]


def entry_object(module: types.ModuleType, entry: Entry) -> Any:
    """The module-level object the entry is reached through (a class: the innermost of its classes)."""
    target = module.__dict__.get(entry_name(entry))
    if target is None:
        raise NotDefined(f"{entry_name(entry)} is not defined by the module's definitions alone")
    if entry["kind"] == "class":
        for outer, inner in zip(entry["classes"], entry["classes"][1:]):
            target = getattr(target, _mangled(outer, inner))
    return target


def float_tensors(out: object, what: str) -> list[Any]:
    tf = TF
    flat = [t for t in tf.nest.flatten(out) if (tf.is_tensor(t) or isinstance(t, tf.Variable)) and t.dtype.is_floating]
    if not flat:
        raise NoTensor(f"{what}, no float tensor to take gradients of")
    return flat


def _call_block(module: types.ModuleType, entry: Entry, tensors: dict[str, Any]) -> list[Any]:
    fn = module.__dict__["__grl_block__"]
    kwargs = {n: tensors[n] for n in entry["tensors"]}
    for obj, attrs in entry["objects"].items():
        kwargs[obj] = types.SimpleNamespace(**{a: tensors[f"{obj}.{a}"] for a in attrs})
    graph = TF.compat.v1.get_default_graph() if MODE == "tf1" else None
    out = fn(graph, **kwargs)
    if isinstance(out, dict) and out.get("__grl_block__"):
        out = [out[name] for name in entry["outputs"]]
    return float_tensors(out, "the block leaves")


def define(module: types.ModuleType, finder: _ProjectFinder, req: Request, side: str,
           after_each: Callable[[], None] | None = None) -> str | None:
    """Run the module's definitions that the entry needs (for a block, what ``side`` of it reads,
    then the block itself as ``__grl_block__``); the block's file, or None."""
    from .loading import run_definitions

    entry = req.entry
    wanted = set(entry[side]["reads"]) if entry["kind"] == "block" else {entry_name(entry)}
    assert module.__file__ is not None  # load() compiles each module from a file that holds its text
    run_definitions(module, req.source, module.__file__, wanted, after_each, finder.project)
    return load_block(module, entry, side) if entry["kind"] == "block" else None


def load_block(module: types.ModuleType, entry: Entry, side: str) -> str:
    """The block (or the lines the migration put in its place) as ``__grl_block__`` in the
    module's namespace, compiled from a file of its own (autograph reads the source back)."""
    import tempfile

    source = entry[side]["source"]
    path = os.path.join(tempfile.gettempdir(), module.__name__, "__grl_block__.py")
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    flags = module.__dict__.get("__grl_future_flags__", 0)  # the module's own future features (run_definitions)
    exec(compile(source, path, "exec", flags, dont_inherit=True), module.__dict__)
    return path


def module_inputs(module: types.ModuleType, entry: Entry, side: str) -> dict[str, Any]:
    """Float tensors and variables of the module that a block reads (a module-level
    ``tf.Variable``): the gradient is taken with respect to them too."""
    if entry["kind"] != "block":
        return {}
    out = {}
    for name in entry[side]["reads"]:
        value: Any = module.__dict__.get(name)
        if (TF.is_tensor(value) or isinstance(value, TF.Variable)) and value.dtype.is_floating:
            out[f"module.{name}"] = value
    return out


def _mangled(cls: str, name: str) -> str:
    """``self.__quantize`` is stored as ``_Class__quantize``."""
    if name.startswith("__") and not name.endswith("__"):
        return f"_{cls.lstrip('_')}{name}"
    return name


def give_up_on(exc: BaseException, module: types.ModuleType | None = None) -> None:
    """Raise what ends the attempt whatever the shape: a missing module (also one the code
    imports as it runs, or TensorFlow wraps; a name a star-import of a missing module would have
    bound), a statement of script code the call needs."""
    found = _in_chain(exc, GIVE_UP[:2])
    if found is not None:
        raise found from None
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        raise MissingDependency(exc.name) from None
    name_error = _in_chain(exc, (NameError,))
    if name_error is not None and module is not None:
        from .loading import explain_name_error

        explained = explain_name_error(module, name_error)
        if explained is not None:
            raise explained from None


def _in_chain(exc: BaseException | None, kinds: tuple[type[_E], ...]) -> _E | None:
    """An exception of ``kinds`` in ``exc``'s chain (TensorFlow and autograph wrap errors)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def describe(exc: BaseException) -> str:
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if text and text[0].startswith("in user code:"):  # autograph's wrapping: the error is last
        text = text[-1:]
        if text[0].split(":")[0].isidentifier():  # "ValueError: ..." already names the type
            return text[0][:240]
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def session_config_without_rewrites(tf1: Any) -> Any:
    """A TF1 Session config with grappler off: its fusions (MatMul+Add+Sigmoid in one kernel)
    round 1 ulp differently from the ops they fuse, the optimizer's doing, not TF1's semantics.
    (The differential tests use it too: one engine of proof.)"""
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrites = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
    return tf1.ConfigProto(graph_options=tf1.GraphOptions(rewrite_options=rewrites))


def run_function_without_rewrites(tf: Any, fn: Callable[..., Any], *args: Any, autograph: bool = True) -> Any:
    """``tf.function(fn)(*args)`` with grappler off, as for the TF1 Session (options restored).
    The verifier traces without autograph, as TF1 built graphs from Python (its child would
    convert every function afresh, the verifier's own too: ~3 s a request); the tests with it,
    as users' TF2 code runs."""
    options = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        return tf.function(fn, autograph=autograph)(*args)
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False, **options})


def gradient_registry() -> dict[str, Any]:
    """TensorFlow's registry of gradient functions by name."""
    from tensorflow.python.framework import ops

    return ops._gradient_registry._registry


def defined_variables() -> dict[str, Any]:
    """What ``tf.compat.v1.get_variable`` holds once the module's definitions ran, by name."""
    from tensorflow.python.ops import variable_scope

    return dict(variable_scope._get_default_variable_store()._vars)


@contextlib.contextmanager
def variables_as_defined(defined: dict[str, Any]) -> Iterator[None]:
    """``tf.compat.v1.get_variable``'s store as the definitions left it, afresh for one run: TF1
    ran each in a graph of its own, while TF2 keeps one store for every ``tf.function`` (a second
    run would reuse the first's variables and make none)."""
    from tensorflow.python.ops import variable_scope

    store = variable_scope._VariableStore()
    store._vars = dict(defined)
    with variable_scope.with_variable_store(store):
        yield


class fresh_gradient_registry:  # lower case: a context manager
    """Forget the gradient names registered inside, as a fresh process would (the differential
    tests load cases that reuse names; a worker's child is a fresh process already)."""

    def __enter__(self) -> None:
        self.before = set(gradient_registry())

    def __exit__(self, *exc: object) -> None:
        registry = gradient_registry()
        for name in set(registry) - self.before:
            del registry[name]


def array(value: object) -> Array:
    """A protocol Array of a numpy-convertible value."""
    import numpy as np

    from .protocol import Array

    a = np.asarray(value, dtype=np.float64)
    return Array(tuple(int(d) for d in a.shape), tuple(float(v) for v in a.ravel()))
