"""How a verification worker loads the user's code (``verify_worker.py`` runs it): a fresh
module from the text under test, executed as its definitions only (the slice ``probes.definitions``
chooses: imports, defs, classes, what they read; never script code), the project's modules it
imports loaded the same way (under TF2 as the run migrated them), and a stub for each module that
is not installed, which raises :class:`MissingDependency` when used (a class of the user's code may
subclass one: the stand-ins used so are noted in ``STAND_INS``)."""

from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import itertools
import os
import sys
import types

from .probes import definitions

_counter = itertools.count()


class MissingDependency(AttributeError):
    """A module the user's code imports is not installed: a stub stood in for it until used (an
    AttributeError, so ``hasattr`` on a stand-in answers False)."""

    def __init__(self, name):
        super().__init__(f"needs module {name}, which is not installed here")
        self.module = name


STAND_INS: set = set()  # stubs that served as a base class in the current request


class _StubMeta(type):
    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise MissingDependency(cls._grl_module)

    def __call__(cls, *args, **kwargs):
        if "_grl_stub" in cls.__dict__:  # the missing thing itself, called
            raise MissingDependency(cls._grl_module)
        return super().__call__(*args, **kwargs)  # a class of the user's code that subclasses it


def stub_class(module: str, attr: str):
    """Stands in for ``module.attr``. Calling it raises MissingDependency; a class of the user's
    code may subclass it (``class GradientReversal(Layer)``): its own methods then run, with a base
    whose ``__init__`` does nothing and whose every other attribute raises. The answer says so."""

    def __init__(self, *args, **kwargs):
        STAND_INS.add(f"{module}.{attr}" if not module.endswith(f".{attr}") else module)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise MissingDependency(module)

    return _StubMeta(attr, (), {"_grl_module": module, "_grl_stub": True, "__init__": __init__,
                                "__getattr__": __getattr__})


class _StubModule(types.ModuleType):
    """Stands in for a module that is not installed: its names load (a class may subclass one),
    and any use raises MissingDependency naming the module."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return stub_class(self.__name__, attr)


class _ProjectFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Modules of the user's project (beside the file, or under the run's roots) load as their
    definitions only: importing one never runs its script code."""

    def __init__(self, roots, migrated=None, after_each=None):
        self.roots = [r for r in roots if os.path.isdir(r)]
        self.project = project_modules(self.roots)  # their top-level names, read once
        self.after_each = after_each
        self.loaded = []
        self.migrated = migrated or {}  # absolute path -> a file holding its text as this run migrated it

    def find_spec(self, fullname, path=None, target=None):
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
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        self.loaded.append(module.__name__)
        # as this run migrated it: compiled from the file that holds that text (autograph reads it back)
        origin = self.migrated.get(os.path.abspath(module.__spec__.origin), module.__spec__.origin)
        with open(origin, "rb") as handle:
            source = handle.read()
        run_definitions(module, source, origin, None, self.after_each, self.project)


def project_modules(roots) -> frozenset:
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
            elif os.path.isfile(os.path.join(root, entry, "__init__.py")):
                names.add(entry)
    return frozenset(names)


def run_definitions(module, source, path, wanted, after_each=None, project=frozenset()):
    """Execute the statements of ``source`` that define ``wanted`` (None: every def, class and
    constant, a module the code under test imports), one at a time, standing a stub in for each module that is not installed; ``after_each()``
    runs after each statement (TF1's Keras names, set on what the statement imported)."""
    tree = ast.parse(source, path)
    for stmt in definitions(tree, wanted, project):
        code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
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
            except ImportError:
                if not isinstance(stmt, ast.ImportFrom):
                    raise
                for alias in stmt.names:  # `from keras.layers import Gone`: that name alone is missing
                    try:
                        single = ast.copy_location(ast.ImportFrom(stmt.module, [alias], stmt.level), stmt)
                        exec(compile(ast.fix_missing_locations(ast.Module(body=[single], type_ignores=[])),
                                     path, "exec"), module.__dict__)
                    except ImportError:
                        module.__dict__[alias.asname or alias.name] = stub_class(f"{stmt.module}.{alias.name}",
                                                                                  alias.name)
                break
        if after_each is not None:
            after_each()


def load(path, source, roots, migrated=None, tag="", after_each=None):
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


_COPIES: dict = {}  # (file name, text) -> the file holding it: one per text, however often it is loaded


def _copy_of(path, source) -> str:
    import tempfile

    key = (os.path.basename(path) or "module.py", source)
    copy = _COPIES.get(key)
    if copy is None:
        copy = os.path.join(tempfile.gettempdir(), f"_grl_source_{os.getpid()}_{len(_COPIES)}", key[0])
        os.makedirs(os.path.dirname(copy))
        with open(copy, "w", encoding="utf-8") as handle:
            handle.write(source)
        _COPIES[key] = copy
    return copy


def forget(finder):
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for name in finder.loaded:
        sys.modules.pop(name, None)
    for name in [n for n in sys.modules if n.startswith("_grl_verify_")]:
        del sys.modules[name]
