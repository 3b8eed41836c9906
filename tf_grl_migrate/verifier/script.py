"""What of a user's module a worker may run: its imports, its definitions and the bindings whose
values call nothing the tool cannot prove harmless; never script code.
Why it is built so: docs/design.md, "verifier/script.py"."""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import cast

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
    "re.compile", "logging.getLogger", "logging.debug", "logging.info", "logging.warning", "logging.warn",
    "logging.error", "logging.critical", "uuid.uuid4", "itertools.count", "itertools.chain", "itertools.product",
    "itertools.repeat", "abc.abstractmethod", "contextlib.contextmanager", "enum.Enum", "typing.NamedTuple",
    "dataclasses.dataclass", "dataclasses.field",
})
HARMLESS_PREFIXES = ("math.", "numpy.random.", "os.path.", "keras.layers.", "keras.initializers.",
                     "keras.regularizers.", "keras.constraints.", "keras.activations.", "typing.", "warnings.warn")
METACLASSES = frozenset({"abc.ABCMeta"})  # a class statement may name these (library code) as its metaclass
# builtins that call a function they are handed (its position: first argument, or `key=`): a
# lambda (its body checked) or another builtin, never a name whose code the tool has not read
CALLS_ITS_ARGUMENT = frozenset({"map", "filter", "sorted", "min", "max", "iter"})
# a class of the module that defines one of these runs its own code when subclassed, or when an
# instance is made in a class body (``__set_name__``)
CLASS_HOOKS = frozenset({"__init_subclass__", "__set_name__", "__class_getitem__"})
MODULE_DUNDERS = frozenset({"__name__", "__file__", "__doc__", "__package__", "__spec__"})
NUMPY = frozenset({"array", "asarray", "zeros", "ones", "full", "arange", "linspace", "eye", "float16", "float32",
                   "float64", "int32", "int64", "uint8", "sqrt", "exp", "log", "log2", "pi", "prod", "sum", "mean",
                   "dtype", "finfo", "iinfo"})
STRING_METHODS = frozenset(dir(str))
DEPTH = 3


class Harmless:
    """Answers, for one module, whether a statement or expression can run without running script
    code. ``aliases``: what each module-level import binds (``tf`` -> ``tensorflow``);
    ``local``: the module's own defs and classes, by name."""

    def __init__(self, tree: ast.Module, op_callables: frozenset[str] = frozenset(),
                 project: frozenset[str] = frozenset()) -> None:
        self.aliases: dict[str, str] = {}
        self.local: dict[str, ast.FunctionDef | ast.ClassDef] = {}
        self.op_callables = op_callables
        self.bound: set[str] = set()  # every name the module binds anywhere (a builtin it shadows is no builtin)
        library: set[str] = set()  # names imports bind to a library's objects (not the project's)
        assigned: set[str] = set()  # names an assignment (any target) binds
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    if a.name.split(".")[0] not in project:
                        library.add(a.asname or a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for a in node.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                        if node.module.split(".")[0] not in project:
                            library.add(a.asname or a.name)
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                assigned.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, (ast.Global, ast.ExceptHandler)):
                self.bound.update(node.names if isinstance(node, ast.Global) else [node.name] if node.name else [])
        self.bound |= assigned
        self.library = library - assigned  # an imported name rebound by the module is no library's object
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                self.local[stmt.name] = stmt
        defined = Counter(n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                           ast.ClassDef)))
        # the module's plain functions: defined once, undecorated, never rebound; setting an
        # attribute of one (`counter.calls = 0`) runs no code of the module's
        self.plain_functions = frozenset(
            s.name for s in tree.body if isinstance(s, ast.FunctionDef) and not s.decorator_list
            and defined[s.name] == 1 and s.name not in assigned and s.name not in self.aliases)
        self._local_ok: dict[str, bool] = {}
        self.inert_names: frozenset[str] = frozenset()
        self.inert_names, self.instances = self._module_values(tree)

    # -- statements --------------------------------------------------------------------------
    def statement(self, stmt: ast.stmt, depth: int = DEPTH) -> str | None:
        """None where ``stmt`` may run; else what would run that is not proven harmless."""
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal)):
            return None
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return None  # a docstring
            if registers(stmt.value):  # the registration's name, and what makes the function it registers
                value = stmt.value
                made = value.func if isinstance(value, ast.Call) and isinstance(value.func, ast.Call) else value
                name = made.args[0] if isinstance(made, ast.Call) and made.args else None
                registered = value.args if made is not value and isinstance(value, ast.Call) else []
                return self.expression(name, depth) or next((w for a in registered if (w := self._argument(
                    a, depth, frozenset()))), None)
            why = self.expression(stmt.value, depth)  # a harmless call (`log.info(...)` in an `if` that defines)
            return None if why is None else f"{why} (script code)"
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts = [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
            parts += [a.annotation for a in [*stmt.args.posonlyargs, *stmt.args.args, *stmt.args.kwonlyargs]
                      if a.annotation is not None]
            return self._decorators_and(stmt.decorator_list, parts, depth)
        if isinstance(stmt, ast.ClassDef):
            why = self._class_creation(stmt) or self._decorators_and(stmt.decorator_list, stmt.bases, depth)
            return why or next((w for s in stmt.body if (w := self.statement(s, depth))), None)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            return self._assignment(stmt, depth)
        if isinstance(stmt, ast.If):
            return self.expression(stmt.test, depth) or self._truth(stmt.test) or self._body(
                [*stmt.body, *stmt.orelse], depth)
        if isinstance(stmt, ast.Try):
            types = next((w for h in stmt.handlers if (w := self.expression(h.type, depth))), None)
            return types or self._body([*stmt.body, *stmt.orelse, *stmt.finalbody,
                                        *(s for h in stmt.handlers for s in h.body)], depth)
        if isinstance(stmt, ast.With):
            return next((w for i in stmt.items if (w := self._context(i.context_expr, depth))), None) or self._body(
                stmt.body, depth)
        return f"a `{type(stmt).__name__.lower()}` statement (script code)"

    def _assignment(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, depth: int) -> str | None:
        if isinstance(stmt, ast.Assign) and all(self.sets_function_attribute(t) for t in stmt.targets):
            return self.expression(stmt.value, depth, top=True)
        if stmt.value is None:
            return self.expression(getattr(stmt, "annotation", None), depth)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets):
            return "an assignment to something other than a name"
        operated = [stmt.target, stmt.value] if isinstance(stmt, ast.AugAssign) else [stmt.value] if any(
            isinstance(t, (ast.Tuple, ast.List)) for t in targets) else []  # `x += v` and `a, b = v` act on them
        if not all(self.inert(v) for v in operated):
            return f"`{ast.unparse(stmt)[:60]}` may run code of the module's own objects (unpacking, an operator)"
        if isinstance(stmt.value, ast.Name) and stmt.value.id not in self.instances:
            return None  # another name for a value: nothing runs
        return self.expression(getattr(stmt, "annotation", None), depth) or self.expression(stmt.value, depth,
                                                                                            top=True)

    def sets_function_attribute(self, target: ast.expr) -> bool:
        """``f.attr``, ``f`` one of the module's plain functions and ``attr`` none of Python's own
        (``f.__code__ = ...`` would make ``f`` run code other than what this module reads of it)."""
        return (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id in self.plain_functions
                and not (target.attr.startswith("__") and target.attr.endswith("__")))

    def _context(self, expr: ast.expr, depth: int) -> str | None:
        """A with item: a call whose result's ``__enter__`` is a library's (or a generator's the
        module defines with @contextmanager, whose body is checked), never an object of a class
        of the module."""
        shown = f"the with item `{ast.unparse(expr)[:60]}`"
        if not isinstance(expr, ast.Call):
            return f"{shown} (its __enter__ may be the module's own code)"
        name = self.qualified(expr.func)
        if name in self.local and isinstance(self.local[name], ast.ClassDef):
            return f"{shown} (an object of the module's class `{name}`: its __enter__ runs)"
        return self.expression(expr, depth)

    def _truth(self, test: ast.expr) -> str | None:
        if self.inert(test):
            return None
        return f"the test `{ast.unparse(test)[:60]}` (its truth may run the module's code)"

    def _class_creation(self, stmt: ast.ClassDef) -> str | None:
        """What creating the class runs besides its body: a metaclass (only a library's named in
        METACLASSES), a base of the module's that hooks subclassing (``__init_subclass__``)."""
        for keyword in stmt.keywords:
            if keyword.arg != "metaclass" or self.qualified(keyword.value) not in METACLASSES:
                return f"the class keyword `{ast.unparse(keyword)[:60]}` (a metaclass or a hook runs)"
        for base in stmt.bases:
            name = self.qualified(base)
            if name in self.local and not self._plain_class(name):
                return f"the base `{name}` (the module's class, which hooks subclassing or has a metaclass)"
        return None

    def _plain_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """A class of the module without a metaclass or keywords, hooks (CLASS_HOOKS), or such a base."""
        node = self.local.get(name)
        if not isinstance(node, ast.ClassDef) or name in seen:
            return isinstance(node, ast.ClassDef)
        if node.keywords or any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in CLASS_HOOKS
                                for s in node.body):
            return False
        return all(self._plain_class(b, seen | {name}) for base in node.bases
                   if (b := self.qualified(base)) in self.local)

    def _body(self, stmts: Iterable[ast.stmt], depth: int) -> str | None:
        return next((w for s in stmts if (w := self.statement(s, depth))), None)

    def _decorators_and(self, decorators: list[ast.expr], parts: Iterable[ast.expr], depth: int) -> str | None:
        for d in decorators:
            if isinstance(d, ast.Call):  # the call that makes the decorator is checked below; then it is called
                name = self.qualified(d.func)
                if name in self.local and isinstance(self.local[name], ast.ClassDef):
                    return f"the decorator `{ast.unparse(d)[:60]}` (an object of the module's class: its __call__ runs)"
                continue
            name = self.qualified(d)
            if not (self._builtin(name) or self._known(name) or (name in self.local and self._local(name, depth))):
                return f"the decorator `{ast.unparse(d)}`"
        return next((w for p in [*(d for d in decorators if isinstance(d, ast.Call)), *parts]
                     if (w := self.expression(p, depth))), None)

    def _builtin(self, name: str | None) -> bool:
        """A builtin of BUILTINS the module does not shadow."""
        return name in BUILTINS and name not in self.bound

    # -- expressions -------------------------------------------------------------------------
    def expression(self, expr: ast.expr | None, depth: int = DEPTH, names: frozenset[str] = frozenset(),
                   top: bool = False) -> str | None:
        """None where evaluating ``expr`` calls only harmless callables and its operators, tests,
        subscripts, unpackings and formatting act only on inert values (``inert``: never an object
        of the module's own classes, whose dunders would run); else the first thing that does not.
        ``names``: parameters and comprehension variables taken as inert; ``top``: ``expr`` is a
        whole assigned value (an object of the module's class may be made there, only)."""
        if expr is None:
            return None
        stack: list[tuple[ast.AST, frozenset[str]]] = [(expr, names)]
        while stack:
            node, names = stack.pop()
            if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
                return f"`{ast.unparse(node)[:60]}`"
            if isinstance(node, ast.Lambda):
                stack.extend((d, names) for d in node.args.defaults + [d for d in node.args.kw_defaults if d])
                continue  # its body runs when it is called, not here (a builtin that calls it: _argument)
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                names = names | {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
                if not all(self.inert(g.iter, names) for g in node.generators):
                    return f"the iteration in `{ast.unparse(node)[:60]}` (over an object of the module's own)"
            why = self._operation(node, names)
            if why is not None:
                return why
            if isinstance(node, ast.Name) and node.id in self.instances and node.id not in names:
                return f"`{node.id}`, an object of the module's own class, used while the module loads"
            if isinstance(node, ast.Call):
                if not self._call(node, depth):
                    return f"the call `{ast.unparse(node)[:80]}`"
                why = self._arguments(node, depth, names, top and node is expr)
                if why is not None:
                    return why
                stack.append((node.func, names))
                continue  # the arguments were checked, each as what the callee may do with it
            stack.extend((child, names) for child in reversed(list(ast.iter_child_nodes(node))))
        return None

    def _operation(self, node: ast.AST, names: frozenset[str]) -> str | None:
        """An operator, test, subscript, unpacking or format on a value that may be an object of
        the module's own class (whose dunder methods would run)."""
        operands_of = _OPERANDS.get(type(node))
        if operands_of is None or (isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)):
            return None
        operands = operands_of(node)
        bad = next((o for o in operands if not self.inert(o, names)), None)
        if bad is None:
            return None
        return f"`{ast.unparse(node)[:60]}` may run code of the module's own objects (`{ast.unparse(bad)[:40]}`)"

    def _arguments(self, call: ast.Call, depth: int, names: frozenset[str], whole: bool) -> str | None:
        """What the callee may do with its arguments: a builtin computes on them (they are inert;
        the function one of CALLS_ITS_ARGUMENT calls is a lambda, checked, or a builtin); a
        library's callable may also keep a function (``tf.custom_gradient(f)``); a call of the
        module's own class makes an object, only as the whole value assigned (``flip = Flip()``)."""
        name = self.qualified(call.func)
        if name in self.local and isinstance(self.local[name], ast.ClassDef) and not whole:
            return f"`{ast.unparse(call)[:60]}` makes an object of the module's class inside an expression"
        builtin = self._builtin(name) and name not in self.local
        for position, arg in enumerate([*call.args, *(k.value for k in call.keywords)]):
            keyword = call.keywords[position - len(call.args)].arg if position >= len(call.args) else None
            called = builtin and name in CALLS_ITS_ARGUMENT and (position == 0 if name in ("map", "filter", "iter")
                                                                  else keyword == "key")
            if called:
                if isinstance(arg, ast.Lambda):
                    params = {a.arg for a in [*arg.args.posonlyargs, *arg.args.args, *arg.args.kwonlyargs]}
                    why = self.expression(arg.body, depth, names | params)
                elif self._builtin(self.qualified(arg)) or (isinstance(arg, ast.Constant) and arg.value is None):
                    why = None
                else:
                    why = f"`{ast.unparse(arg)[:40]}`, a function the builtin `{name}` would call"
            elif builtin:
                why = None if self.inert(arg, names) else (
                    f"`{ast.unparse(arg)[:40]}` handed to the builtin `{name}` (which may run its own code)")
                why = why or self.expression(arg, depth, names)
            else:
                why = self._argument(arg, depth, names)
            if why is not None:
                return why
        return None

    def _argument(self, arg: ast.expr, depth: int, names: frozenset[str]) -> str | None:
        """An argument of a library's or the module's callable: inert, a lambda or a function of
        the module (kept or called: a called one's body is checked where the callee is the
        module's), never an object of the module's class."""
        if isinstance(arg, ast.Lambda) or (isinstance(arg, ast.Name) and (
                arg.id in self.local or arg.id not in self.bound)):  # the module's function, or a star-import's
            return self.expression(arg, depth, names)
        if isinstance(arg, ast.Starred):
            arg = arg.value
        made = isinstance(arg, ast.Call) and not isinstance(self.local.get(self.qualified(arg.func) or ""),
                                                             ast.ClassDef)  # a function's result, checked below
        if not (made or self.inert(arg, names)):
            return f"`{ast.unparse(arg)[:40]}` passed on (it may be an object of the module's own)"
        return self.expression(arg, depth, names)

    def inert(self, expr: ast.expr | None, names: frozenset[str] = frozenset()) -> bool:
        """Whether ``expr`` is a value no operation on which runs the module's own code: literals
        and containers of them, names bound only to such values (or to a library's objects,
        imported), arithmetic, tests and subscripts of them, a library's call."""
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.Name):
            return (expr.id in names or expr.id in self.inert_names or expr.id in self.library
                    or expr.id in MODULE_DUNDERS or self._builtin(expr.id))
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = names | {n.id for g in expr.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            parts = [*(g.iter for g in expr.generators), *(i for g in expr.generators for i in g.ifs),
                     *((expr.key, expr.value) if isinstance(expr, ast.DictComp) else (expr.elt,))]
            return all(self.inert(p, inner) for p in parts)
        if isinstance(expr, ast.Call):  # a library's callable makes a library's object
            name = self.qualified(expr.func)
            return name is not None and name not in self.local and (self._builtin(name) or self._known(name))
        parts_of = _PARTS.get(type(expr))
        return parts_of is not None and all(self.inert(p, names) for p in parts_of(expr) if p is not None)

    def _module_values(self, tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
        """(the module-level names every binding of which is an assignment of an inert value: the
        largest such set, a name staying while every value assigned to it is inert given the
        others; the names bound to an object of the module's own class)."""
        values: dict[str, list[ast.expr]] = {}
        other: set[str] = set()
        for stmt in _module_level(tree.body):
            targets: list[ast.expr] | None = None
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            if targets is not None and all(isinstance(t, ast.Name) for t in targets):
                for t in targets:
                    values.setdefault(cast(ast.Name, t).id, []).append(value)
            elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                other.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(
                    n.ctx, ast.Load))
        # bound in a function with `global`: by code the tool does not follow
        other.update(n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names)
        instances = frozenset(n for n, vs in values.items() if any(
            isinstance(v, ast.Call) and isinstance(self.local.get(self.qualified(v.func) or ""), ast.ClassDef)
            for v in vs))
        inert = frozenset(n for n in values if n not in other and n not in self.local)
        while True:
            kept = frozenset(n for n in inert if all(self.inert(v, inert) for v in values[n]))
            if kept == inert:
                return kept, instances
            inert = kept

    def _call(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        if isinstance(func, ast.Call) and registers(func):  # RegisterGradient(name)(fn)
            return True
        if isinstance(func, ast.Attribute) and func.attr in STRING_METHODS and isinstance(func.value, (
                ast.Constant, ast.JoinedStr)) and isinstance(getattr(func.value, "value", ""), str):
            return True  # "...".format(...)
        name = self.qualified(func)
        if name is None:
            return False
        if self._builtin(name):
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

    def _body_calls(self, fdef: ast.FunctionDef | ast.ClassDef, depth: int, methods: dict[str, ast.FunctionDef],
                    seen: frozenset[str] = frozenset()) -> bool:
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

    def qualified(self, node: ast.expr | None) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id, node.id)
        return ".".join([head, *reversed(parts)])


# the operands an expression's evaluation dispatches on (their dunder methods run): an operator,
# a test, a subscript, a format, an unpacking, an attribute read
_OPERANDS = {
    ast.BinOp: lambda e: [e.left, e.right], ast.UnaryOp: lambda e: [e.operand], ast.BoolOp: lambda e: e.values,
    ast.Compare: lambda e: [e.left, *e.comparators], ast.Subscript: lambda e: [e.value, e.slice],
    ast.FormattedValue: lambda e: [e.value], ast.Starred: lambda e: [e.value], ast.IfExp: lambda e: [e.test],
    ast.Attribute: lambda e: [e.value],
}
# the parts of the expressions that are inert when all of them are: those above, containers,
# f-strings, slices, both branches of a conditional
_PARTS = {
    **_OPERANDS, ast.IfExp: lambda e: [e.test, e.body, e.orelse],
    ast.Tuple: lambda e: e.elts, ast.List: lambda e: e.elts, ast.Set: lambda e: e.elts,
    ast.Dict: lambda e: [*e.keys, *e.values], ast.JoinedStr: lambda e: e.values,
    ast.Slice: lambda e: [e.lower, e.upper, e.step],
}


def _module_level(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at module level: ``body`` and the blocks of its if/try/with."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.With, ast.Try)):
            yield from _module_level([*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", []),
                                      *(s for h in getattr(stmt, "handlers", []) for s in h.body)])


def registers(node: ast.expr) -> bool:
    """``<...>.RegisterGradient(name)(fn)`` (or the decorator's call, ``RegisterGradient(name)``)."""
    call = node.func if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) else node
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "RegisterGradient") or (
        isinstance(func, ast.Name) and func.id == "RegisterGradient")


def op_callables() -> frozenset[str]:
    """The TensorFlow callables the generated op table traced: they make ops, nothing else."""
    from ..knowledge import ops

    return frozenset(ops.table())


_ = builtins  # the builtins above are a subset of these, chosen: calling them computes only
