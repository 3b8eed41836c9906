"""How a worker's child loads the user's code: a fresh module from the text under test, executed
as the definitions the call needs (``definitions``: imports, defs, classes, bindings; never script
code, ``script.py`` says what may run), the project's modules it imports loaded the same way
(under TF2 as the run migrated them), and a stub for each module that is not installed, which
raises :class:`MissingDependency` when used (a class of the user's code may subclass one: the
stand-ins used so are noted in ``STAND_INS``). A name whose binding was not run (script code) or
that only a star-import of a missing module could have bound is named when it is missing."""

from __future__ import annotations
import __future__

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import os
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from .script import Harmless, op_callables, registers

if TYPE_CHECKING:
    import symtable

_counter = itertools.count()


class MissingDependency(AttributeError):
    """A module the user's code imports is not installed: a stub stood in for it until used (an
    AttributeError, so ``hasattr`` on a stand-in answers False)."""

    def __init__(self, name: str, how: str = "") -> None:
        where = "" if how else in_the_tree(name)
        super().__init__(f"needs module {name}: {where}" if where else
                         f"needs module {name}{how}, which is not installed here")
        self.module = name


class ScriptCodeNeeded(RuntimeError):
    """The call needs a name that only a statement verification does not run binds."""


STAND_INS: set[str] = set()  # stubs that served as a base class in the current request


# what code does with a value (arithmetic, conversion, iteration): on a stand-in, each names the
# missing module (`-SCALE` of a constant from a module that is not installed), not a TypeError
_USES = ("neg", "pos", "abs", "invert", "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv",
         "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "float", "int", "index",
         "len", "iter", "getitem")


def _raising(method: str) -> Callable[..., NoReturn]:
    def use(self: Any, *args: object) -> NoReturn:
        raise MissingDependency(self._grl_module)

    use.__name__ = f"__{method}__"
    return use


class _StubMeta(type):
    def __getattr__(cls, attr: str) -> NoReturn:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise MissingDependency(cls._grl_module)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_grl_stub" in cls.__dict__:  # the missing thing itself, called
            raise MissingDependency(cls._grl_module)
        return super().__call__(*args, **kwargs)  # a class of the user's code that subclasses it


for _use in _USES:
    setattr(_StubMeta, f"__{_use}__", _raising(_use))


def stub_class(module: str, attr: str) -> _StubMeta:
    """Stands in for ``module.attr``. Calling it raises MissingDependency; a class of the user's
    code may subclass it (``class GradientReversal(Layer)``): its own methods then run, with a base
    whose ``__init__`` does nothing and whose every other attribute raises. The answer says so."""

    def __init__(self: Any, *args: object, **kwargs: object) -> None:
        STAND_INS.add(f"{module}.{attr}" if not module.endswith(f".{attr}") else module)

    def __getattr__(self: Any, name: str) -> NoReturn:
        if name.startswith("__"):
            raise AttributeError(name)
        raise MissingDependency(module)

    return _StubMeta(attr, (), {"_grl_module": module, "_grl_stub": True, "__init__": __init__,
                                "__getattr__": __getattr__})  # its instances: object's uses (a subclass's own)


class _StubModule(types.ModuleType):
    """Stands in for a module that is not installed: its names load (a class may subclass one),
    and any use raises MissingDependency naming the module."""

    def __getattr__(self, attr: str) -> _StubMeta:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return stub_class(self.__name__, attr)


class _ProjectFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Modules of the user's project (beside the file, or under the run's roots) load as their
    definitions only: importing one never runs its script code."""

    def __init__(self, roots: Iterable[str], migrated: dict[str, str] | None = None,
                 after_each: Callable[[], None] | None = None) -> None:
        self.roots = [r for r in roots if os.path.isdir(r)]
        self.project = project_modules(self.roots)  # their top-level names, read once
        self.after_each = after_each
        self.loaded: list[str] = []
        self.migrated = migrated or {}  # absolute path -> a file holding its text as this run migrated it

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        parent, _, last = fullname.rpartition(".")
        if parent and parent not in self.loaded:  # a submodule of a package not of the project
            return None
        folders = list(path or ()) if parent else self.roots
        for folder in folders:
            for candidate, package in ((os.path.join(folder, (last if parent else fullname)) + ".py", False),
                                       (os.path.join(folder, (last if parent else fullname), "__init__.py"), True)):
                if os.path.isfile(candidate):
                    return importlib.util.spec_from_file_location(
                        fullname, candidate, loader=self,
                        submodule_search_locations=[os.path.dirname(candidate)] if package else None)
        return self._namespace(fullname, [os.path.join(f, last if parent else fullname) for f in folders])

    def _namespace(self, fullname: str, portions: list[str]) -> importlib.machinery.ModuleSpec | None:
        """A folder of the project without ``__init__.py`` that holds modules: a namespace package,
        as Python makes one (PEP 420), where nothing installed has the name; its modules then
        load through this finder like every other of the project."""
        portions = [p for p in portions if _holds_modules(p)]
        if not portions or ("." not in fullname and _installed(fullname)):
            return None
        self.loaded.append(fullname)
        spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
        spec.submodule_search_locations = portions
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        self.loaded.append(module.__name__)
        # as this run migrated it: compiled from the file that holds that text (autograph reads it back)
        spec = module.__spec__
        assert spec is not None and spec.origin is not None  # find_spec made it for a file
        origin = self.migrated.get(os.path.abspath(spec.origin), spec.origin)
        with open(origin, "rb") as handle:
            source = handle.read()
        run_definitions(module, source, origin, None, self.after_each, self.project)


def _holds_modules(folder: str) -> bool:
    """Whether a folder holds a module or a package (one level: a data folder is never walked)."""
    try:
        return any(entry.endswith(".py") or os.path.isfile(os.path.join(folder, entry, "__init__.py"))
                   for entry in os.listdir(folder))
    except OSError:
        return False


def _installed(name: str) -> bool:
    """Whether an installed module or regular package has the top-level ``name``."""
    spec = importlib.machinery.PathFinder.find_spec(name)
    return spec is not None and spec.loader is not None and spec.origin is not None


def in_the_tree(name: str) -> str:
    """Where module ``name`` is a file in the tree the run's roots do not reach (a folder above
    them): where, and what to do; empty otherwise."""
    finder = next((f for f in sys.meta_path if isinstance(f, _ProjectFinder)), None)
    parts = name.split(".")
    for root in finder.roots if finder is not None else ():
        folder = os.path.dirname(root)
        for _ in range(len(parts) + 3):  # the folders above the root a package of the name could start in
            stem = os.path.join(folder, *parts)
            if os.path.isfile(stem + ".py") or os.path.isfile(os.path.join(stem, "__init__.py")):
                return (f"it is in the tree, in {folder}, above where the run starts ({root}); run the tool on "
                        f"{folder} so that `{parts[0]}` can be imported")
            if os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
    return ""


def project_modules(roots: Iterable[str]) -> frozenset[str]:
    """The top-level module names the project's folders hold (``grads`` for ``grads.py``)."""
    names = set()
    for root in roots:
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".py"):
                names.add(entry[:-3])
            elif os.path.isfile(os.path.join(root, entry, "__init__.py")) or (
                    entry.isidentifier() and _holds_modules(os.path.join(root, entry))):
                names.add(entry)  # a package, or a folder of modules (a namespace package)
    return frozenset(names)


# ---------------------------------------------------------------------------------------------
# The slice of a module that runs

def _binds(stmt: ast.stmt) -> set[str]:
    from ..migrator.slicing import module_binds

    return module_binds(stmt)


def _function_attributes_set(stmt: ast.stmt, check: Harmless) -> set[str]:
    """The module's plain functions whose attributes ``stmt`` sets (``f.calls = 0``): it goes with
    them."""
    if isinstance(stmt, ast.Assign) and all(check.sets_function_attribute(t) for t in stmt.targets):
        return {t.value.id for t in stmt.targets}  # type: ignore[attr-defined]
    return set()


def _is_main_guard(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
            and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(stmt.test)))


def _registers(stmt: ast.stmt) -> bool:
    """A statement that registers a gradient (a decorated def, a class holding one, the call form)."""
    if isinstance(stmt, ast.ClassDef):
        return any(_registers(s) for s in stmt.body)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return any(registers(d) for d in stmt.decorator_list)
    return isinstance(stmt, ast.Expr) and registers(stmt.value)


def _global_reads(stmt: ast.stmt) -> set[str]:
    """The module-level names a statement reads, as Python's own symbol table resolves them."""
    import symtable

    try:
        table = symtable.symtable(ast.unparse(stmt), "<statement>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    found: set[str] = set()

    def walk(t: symtable.SymbolTable, top: bool) -> None:
        for sym in t.get_symbols():
            if (sym.is_referenced() and top) or (not top and sym.is_global() and (
                    sym.is_referenced() or sym.is_declared_global())):
                found.add(sym.get_name())
        for child in t.get_children():
            walk(child, False)

    walk(table, True)
    return found


def definitions(tree: ast.Module, wanted: set[str] | None,
                project: frozenset[str] = frozenset()) -> tuple[list[ast.stmt], dict[str, tuple[int, str, str]]]:
    """(the module-level statements to run, {name: (line, source, why)} of the needed names whose
    binding may not run). The statements are those binding a name ``wanted`` needs (None: a module
    imported by the one under test: its defs, classes and bindings), gradient registrations and
    the imports of project modules (a project module may register gradients on import), and,
    repeatedly, what those read; of them, those ``script.Harmless`` lets run."""
    body = [s for s in tree.body if not _is_main_guard(s)]
    check = Harmless(tree, op_callables())
    why = [check.statement(s) for s in body]
    binds = [_binds(s) for s in body]
    # `f.calls = 0` after `def f`: runs with f (a plain function, script.Harmless)
    binds = [b | _function_attributes_set(s, check) if w is None else b for s, b, w in zip(body, binds, why)]
    if wanted is None:
        wanted = {n for s, b, w in zip(body, binds, why) if w is None
                  and isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign))
                  for n in b}
    keep = [False] * len(body)
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.ImportFrom) and (stmt.module == "__future__" or any(a.name == "*" for a in stmt.names)
                                                 or stmt.level or (stmt.module or "").split(".")[0] in project):
            keep[i] = True
        elif isinstance(stmt, ast.Import) and any(a.name.split(".")[0] in project for a in stmt.names):
            keep[i] = True
        elif _registers(stmt) and why[i] is None:
            keep[i] = True
    needed = set(wanted)
    changed = True
    while changed:
        changed = False
        for i in range(len(body)):
            if not keep[i] and why[i] is None and binds[i] & needed:
                keep[i] = True
        new = set(needed)
        for i, stmt in enumerate(body):
            if keep[i]:
                new |= _global_reads(stmt)
        if new != needed:
            needed = new
            changed = True
    refused: dict[str, tuple[int, str, str]] = {}
    for stmt, b, w, k in zip(body, binds, why, keep):
        if w is not None and not k:
            for name in b & needed:
                refused.setdefault(name, (stmt.lineno, _segment(stmt), w))
    return [s for s, k in zip(body, keep) if k], refused


def future_flags(tree: ast.Module) -> int:
    """The compiler flags of a module's ``from __future__ import ...`` statements (its first
    statements, after a docstring)."""
    flags = 0
    for i, stmt in enumerate(tree.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            break
        for alias in stmt.names:
            feature = getattr(__future__, alias.name, None)
            flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _segment(stmt: ast.stmt) -> str:
    """A statement's first line, as it reads (for a message)."""
    return ast.unparse(stmt).splitlines()[0][:80]


def run_definitions(module: types.ModuleType, source: str | bytes, path: str, wanted: set[str] | None,
                    after_each: Callable[[], None] | None = None, project: frozenset[str] = frozenset()) -> None:
    """Execute the statements of ``source`` that define ``wanted`` (None: every def, class and
    binding, a module the code under test imports), one at a time, standing a stub in for each
    module that is not installed; ``after_each()`` runs after each statement (TF1's Keras names,
    set on what the statement imported)."""
    tree = ast.parse(source, path)
    statements, refused = definitions(tree, wanted, project)
    module.__dict__.setdefault("__grl_refused__", {}).update(refused)
    stars = module.__dict__.setdefault("__grl_star_stubs__", [])
    flags = module.__dict__["__grl_future_flags__"] = future_flags(tree)  # its own, never the loader's
    for stmt in statements:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec", flags, dont_inherit=True)
        for _ in range(20):
            try:
                exec(code, module.__dict__)
                break
            except ModuleNotFoundError as exc:
                if not exc.name or exc.name in ("tensorflow", "numpy", "tf_grl_migrate"):
                    raise
                parts = exc.name.split(".")
                for i in range(1, len(parts) + 1):
                    name = ".".join(parts[:i])
                    if name not in sys.modules:
                        sys.modules[name] = _StubModule(name)
                if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                    stars.append(stmt.module or exc.name)
            except ImportError:
                if not isinstance(stmt, ast.ImportFrom):
                    raise
                for alias in stmt.names:  # `from keras.layers import Gone`: that name alone is missing
                    try:
                        single = ast.copy_location(ast.ImportFrom(stmt.module, [alias], stmt.level), stmt)
                        exec(compile(ast.fix_missing_locations(ast.Module(body=[single], type_ignores=[])),
                                     path, "exec", flags, dont_inherit=True), module.__dict__)
                    except ImportError:
                        module.__dict__[alias.asname or alias.name] = stub_class(f"{stmt.module}.{alias.name}",
                                                                                  alias.name)
                break
        if after_each is not None:
            after_each()


def explain_name_error(module: types.ModuleType, exc: NameError) -> ScriptCodeNeeded | MissingDependency | None:
    """What a NameError in the code under test means, where the tool knows: a name whose binding
    is script code it did not run, or one a star-import of a module that is not installed would
    have bound. None otherwise."""
    name = getattr(exc, "name", None)
    if name is None:
        text = str(exc)
        name = text.split("'")[1] if text.count("'") >= 2 else None
    return explain_missing_name(module, name)


def explain_missing_name(module: types.ModuleType,
                         name: str | None) -> ScriptCodeNeeded | MissingDependency | None:
    """Why ``name`` is not bound in ``module``, where the tool knows (see explain_name_error)."""
    refused = module.__dict__.get("__grl_refused__", {})
    if name in refused:
        line, code, why = refused[name]
        return ScriptCodeNeeded(f"needs `{name}`, which only `{code}` (line {line}) binds, and verification never "
                                f"runs that: {why}")
    stars = module.__dict__.get("__grl_star_stubs__", [])
    if stars:
        return MissingDependency(stars[0], f" (`from {stars[0]} import *` would bind `{name}`)")
    return None


def load(path: str, source: str, roots: Iterable[str], migrated: dict[str, str] | None = None, tag: str = "",
         after_each: Callable[[], None] | None = None) -> tuple[types.ModuleType, _ProjectFinder]:
    """A fresh module for ``path``'s text, and the finder that loads the project's modules it
    imports as their definitions (``finder.project``: their names). The module is compiled under
    the name of a file holding the text: ``tf.function``'s autograph reads a function's source
    back from its file, which must hold the text being verified (the migrated text is not on disk,
    and a hand migration is compared as given)."""
    folder = os.path.dirname(os.path.abspath(path))
    finder = _ProjectFinder([folder, *roots], migrated, after_each)
    sys.meta_path.insert(0, finder)
    module = types.ModuleType(f"_grl_verify_{tag}_{os.getpid()}_{next(_counter)}")
    module.__file__ = _copy_of(path, source)
    sys.modules[module.__name__] = module
    return module, finder


def _copy_of(path: str, source: str) -> str:
    import tempfile

    copy = os.path.join(tempfile.gettempdir(), f"_grl_source_{os.getpid()}_{next(_counter)}",
                        os.path.basename(path) or "module.py")
    os.makedirs(os.path.dirname(copy))
    with open(copy, "w", encoding="utf-8") as handle:
        handle.write(source)
    return copy


def forget(finder: _ProjectFinder) -> None:
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for name in finder.loaded:
        sys.modules.pop(name, None)
    for name in [n for n in sys.modules if n.startswith("_grl_verify_")]:
        del sys.modules[name]
