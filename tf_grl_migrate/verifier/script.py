"""What of a user's module a worker may run: its imports, its definitions and the bindings whose
values call nothing the tool cannot prove harmless; never script code.
Why it is built so: docs/design.md, "verifier/script.py"."""

from __future__ import annotations

import ast
import builtins

BUILTINS = frozenset({
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "hasattr",
    "hash", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "pow",
    "print", "property", "range", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod", "classmethod",
    "str", "sum", "super", "tuple", "type", "zip", "getattr", "Exception", "ValueError", "TypeError",
    "NotImplementedError", "RuntimeError", "KeyError", "IndexError", "AttributeError",
})
HARMLESS = frozenset({
    "tensorflow.get_default_graph", "tensorflow.get_default_session", "tensorflow.Graph", "tensorflow.Variable",
    "tensorflow.constant", "tensorflow.placeholder", "tensorflow.get_variable", "tensorflow.name_scope",
    "tensorflow.variable_scope", "tensorflow.custom_gradient", "tensorflow.function", "tensorflow.TensorShape",
    "tensorflow.python.framework.function.Defun",  # stores the function; it runs when called
    "tensorflow.as_dtype", "tensorflow.DType", "tensorflow.set_random_seed", "tensorflow.random.set_seed",
    "tensorflow.python.framework.ops.get_default_graph", "tensorflow.python.framework.ops.Graph",
    "tensorflow.python.framework.ops.name_scope", "keras.backend.backend", "keras.backend.floatx",
    "keras.backend.epsilon", "keras.backend.image_data_format", "keras.backend.variable", "keras.backend.constant",
    "keras.backend.get_session", "collections.namedtuple", "collections.OrderedDict", "collections.defaultdict",
    "collections.deque", "collections.Counter", "functools.partial", "functools.wraps", "functools.lru_cache",
    "re.compile", "logging.getLogger", "uuid.uuid4", "itertools.count", "abc.abstractmethod",
    "contextlib.contextmanager", "enum.Enum", "typing.NamedTuple", "dataclasses.dataclass", "dataclasses.field",
})
HARMLESS_PREFIXES = ("math.", "numpy.random.", "os.path.", "keras.layers.", "keras.initializers.",
                     "keras.regularizers.", "keras.constraints.", "keras.activations.", "typing.", "itertools.",
                     "logging.", "warnings.warn")
NUMPY = frozenset({"array", "asarray", "zeros", "ones", "full", "arange", "linspace", "eye", "float16", "float32",
                   "float64", "int32", "int64", "uint8", "sqrt", "exp", "log", "log2", "pi", "prod", "sum", "mean",
                   "dtype", "finfo", "iinfo"})
STRING_METHODS = frozenset(dir(str))
DEPTH = 3


class Harmless:
    """Answers, for one module, whether a statement or expression can run without running script
    code. ``aliases``: what each module-level import binds (``tf`` -> ``tensorflow``);
    ``local``: the module's own defs and classes, by name."""

    def __init__(self, tree: ast.Module, op_callables=frozenset()):
        self.aliases, self.local = {}, {}
        self.op_callables = op_callables
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for a in node.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                self.local[stmt.name] = stmt
        self._local_ok: dict = {}

    # -- statements --------------------------------------------------------------------------
    def statement(self, stmt, depth: int = DEPTH) -> str | None:
        """None where ``stmt`` may run; else what would run that is not proven harmless."""
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal)):
            return None
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return None  # a docstring
            if registers(stmt.value):  # the registration's name is all that runs before the gradient is taken
                value = stmt.value
                made = value.func if isinstance(value, ast.Call) and isinstance(value.func, ast.Call) else value
                name = made.args[0] if isinstance(made, ast.Call) and made.args else None
                return self.expression(name, depth)
            why = self.expression(stmt.value, depth)  # a harmless call (`log.info(...)` in an `if` that defines)
            return None if why is None else f"{why} (script code)"
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts = [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
            parts += [a.annotation for a in [*stmt.args.posonlyargs, *stmt.args.args, *stmt.args.kwonlyargs]
                      if a.annotation is not None]
            return self._decorators_and(stmt.decorator_list, parts, depth)
        if isinstance(stmt, ast.ClassDef):
            why = self._decorators_and(stmt.decorator_list, [*stmt.bases, *(k.value for k in stmt.keywords)], depth)
            return why or next((w for s in stmt.body if (w := self.statement(s, depth))), None)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if stmt.value is None:
                return None
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets):
                return "an assignment to something other than a name"
            return self.expression(stmt.value, depth)
        if isinstance(stmt, ast.If):
            return self.expression(stmt.test, depth) or self._body([*stmt.body, *stmt.orelse], depth)
        if isinstance(stmt, ast.Try):
            return self._body([*stmt.body, *stmt.orelse, *stmt.finalbody, *(s for h in stmt.handlers for s in h.body)],
                              depth)
        if isinstance(stmt, ast.With):
            return next((w for i in stmt.items if (w := self.expression(i.context_expr, depth))), None) or self._body(
                stmt.body, depth)
        return f"a `{type(stmt).__name__.lower()}` statement (script code)"

    def _body(self, stmts, depth) -> str | None:
        return next((w for s in stmts if (w := self.statement(s, depth))), None)

    def _decorators_and(self, decorators, parts, depth) -> str | None:
        for d in decorators:
            if isinstance(d, ast.Call):
                continue  # checked as an expression below (the call that makes the decorator)
            name = self.qualified(d)
            if not (name in BUILTINS or self._known(name) or (name in self.local and self._local(name, depth))):
                return f"the decorator `{ast.unparse(d)}`"
        return next((w for p in parts if (w := self.expression(p, depth))), None)

    # -- expressions -------------------------------------------------------------------------
    def expression(self, expr, depth: int = DEPTH) -> str | None:
        """None where evaluating ``expr`` calls only harmless callables; else the first call that is not."""
        if expr is None:
            return None
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)):
                return f"`{ast.unparse(node)[:60]}`"
            if isinstance(node, ast.Lambda):
                stack.extend(node.args.defaults + [d for d in node.args.kw_defaults if d is not None])
                continue  # its body runs when it is called, not here
            if isinstance(node, ast.Call) and not self._call(node, depth):
                return f"the call `{ast.unparse(node)[:80]}`"
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
        return None

    def _call(self, call: ast.Call, depth) -> bool:
        func = call.func
        if isinstance(func, ast.Call) and registers(func):  # RegisterGradient(name)(fn)
            return True
        if isinstance(func, ast.Attribute) and func.attr in STRING_METHODS and isinstance(func.value, (
                ast.Constant, ast.JoinedStr)) and isinstance(getattr(func.value, "value", ""), str):
            return True  # "...".format(...)
        name = self.qualified(func)
        if name is None:
            return False
        if name in BUILTINS and name not in self.aliases and name not in self.local:
            return True
        if name in self.local:
            return self._local(name, depth)
        return self._known(name)

    def _known(self, name: str | None) -> bool:
        if not name:
            return False
        if name.endswith(".RegisterGradient") or name in HARMLESS or name.startswith(HARMLESS_PREFIXES):
            return True
        if name.startswith("numpy.") and name.split(".")[1] in NUMPY:
            return True
        for root in ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow.keras.", "tf_keras."):
            if name.startswith(root):
                return self._known(("tensorflow." if root.startswith("tensorflow.compat") else "keras.")
                                   + name[len(root):])
        return name in self.op_callables

    def _local(self, name: str, depth: int) -> bool:
        """A def or class of the module whose code that a call runs calls only harmless callables:
        a function's body; a class's body and its ``__init__`` (``self.method(...)`` there: that
        method's body, or, inherited, its base's; ``super().__init__(...)``: its base's)."""
        if name not in self._local_ok:
            if depth <= 0:
                return False
            self._local_ok[name] = False  # a cycle is not proven
            node = self.local[name]
            ok = self.statement(node, depth - 1) is None
            if isinstance(node, ast.ClassDef):
                methods = {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}
                runs = [methods[m] for m in ("__new__", "__init__", "__post_init__") if m in methods]
                ok = ok and all(self._body_calls(f, depth - 1, methods) for f in runs)
            else:
                ok = ok and self._body_calls(node, depth - 1, {})
            self._local_ok[name] = ok
        return self._local_ok[name]

    def _body_calls(self, fdef, depth, methods, seen=frozenset()) -> bool:
        for node in (n for s in fdef.body for n in ast.walk(s)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and isinstance(
                    func.value.func, ast.Name) and func.value.func.id == "super":
                continue  # a base class's own code: a library's, or one of the module's (checked when called)
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                method = methods.get(func.attr)
                if method is None or method.name in seen:
                    continue  # inherited (a Keras layer's add_weight), or already looked at
                if depth <= 0 or not self._body_calls(method, depth - 1, methods, seen | {method.name}):
                    return False
                continue
            if not self._call(node, depth):
                return False
        return True

    def qualified(self, node) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id, node.id)
        return ".".join([head, *reversed(parts)])


def registers(node) -> bool:
    """``<...>.RegisterGradient(name)(fn)`` (or the decorator's call, ``RegisterGradient(name)``)."""
    call = node.func if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) else node
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "RegisterGradient") or (
        isinstance(func, ast.Name) and func.id == "RegisterGradient")


def op_callables() -> frozenset:
    """The TensorFlow callables the generated op table traced: they make ops, nothing else."""
    from ..knowledge import ops

    return frozenset(ops.table())


_ = builtins  # the builtins above are a subset of these, chosen: calling them computes only
