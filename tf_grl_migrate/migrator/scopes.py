"""What a name means where it is read, by Python's scoping rules: the scopes of a module (the
module, each def and lambda, class body and comprehension, PEP 695's annotation scopes, and the
builtins around them), the bindings in each, the reads, and the bindings each read may see. The
answers are the ones libcst's ScopeProvider gives on the same tree (``tools/check_scopes.py``
compares the two); the code is this tool's. Filled by bindings.Bindings during the planner's walk.
Why it is built so: docs/design.md, "migrator/scopes.py"."""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Iterable, Iterator
from typing import TypeVar

import libcst as cst
from libcst.helpers import get_full_name_for_node

_made = itertools.count()  # bindings and reads, numbered as the walk finds them: source order
_Made = TypeVar("_Made", "Access", "BaseAssignment")


def _in_source_order(items: Iterable[_Made]) -> list[_Made]:
    return sorted(items, key=lambda item: item.seq)


class Access:
    """A read of a name: ``node`` (a Name, the dotted Attribute an import binds, or the string
    annotation it was read in) and the bindings it may see (``referents``, in source order)."""

    __slots__ = ("node", "scope", "index", "seq", "_sees")

    def __init__(self, node: cst.CSTNode, scope: Scope):
        self.node, self.scope, self.index, self.seq = node, scope, scope.count, next(_made)
        self._sees: set[BaseAssignment] = set()

    @property
    def referents(self) -> list[BaseAssignment]:
        return _in_source_order(self._sees)

    def see(self, name: str) -> None:
        here = self.scope
        found = _lookup(here, name, here)
        seen = {b for b in found if b.scope is not here or b.index < self.index}
        if not seen and found and here.parent is not here:  # only later bindings here: the outer ones
            seen = _lookup(here.parent, name, here)
        self._sees |= seen


class BaseAssignment:
    """A binding of ``name`` in ``scope``; ``index``: how many bindings of its scope ended before it."""

    index = -1
    node: cst.CSTNode | None = None

    def __init__(self, name: str, scope: Scope):
        self.name, self.scope, self.seq = name, scope, next(_made)
        self._read_by: set[Access] = set()

    @property
    def references(self) -> list[Access]:
        """The reads that may see this binding, in source order."""
        return _in_source_order(self._read_by)

    def seen_by(self, reads: set[Access]) -> None:
        """Of ``reads`` (of this name, resolved to this binding's scope), those after it see it;
        those before it see what the scope around would."""
        after = {a for a in reads if a.scope is not self.scope or self.index < a.index}
        self._read_by |= after
        before = reads - after
        outer = self.scope.parent
        if before and outer is not self.scope:
            for binding in _lookup(outer, self.name, outer):
                binding.seen_by(before)

    def qualified(self, full_name: str) -> set[str]:
        raise NotImplementedError


class Assignment(BaseAssignment):
    """A binding made by ``node``: a stored Name, a def or class, a parameter, an import."""

    def __init__(self, name: str, scope: Scope, node: cst.CSTNode, index: int):
        super().__init__(name, scope)
        self.node, self.index = node, index

    def qualified(self, full_name: str) -> set[str]:
        return {_joined(self.scope.path, full_name)}


class ImportAssignment(Assignment):
    """A binding made by an ``import`` statement (``node``)."""

    @property
    def statement(self) -> cst.Import | cst.ImportFrom:
        """The import statement that binds it."""
        assert isinstance(self.node, (cst.Import, cst.ImportFrom))  # what bindings.py binds it with
        return self.node

    _pairs: list[tuple[str, str]] | None = None  # _imported(statement), found at the first question

    def qualified(self, full_name: str) -> set[str]:
        if self._pairs is None:
            self._pairs = _imported(self.statement)
        names = set()
        for bound, real in self._pairs:
            if full_name == bound or full_name.startswith(bound + "."):
                names.add(real + full_name[len(bound):])
        return names


class BuiltinAssignment(BaseAssignment):
    def qualified(self, full_name: str) -> set[str]:
        return {f"builtins.{self.name}"}


def _joined(*parts: str | None) -> str:
    return ".".join(p for p in parts if p)


def _imported(statement: cst.Import | cst.ImportFrom) -> list[tuple[str, str]]:
    """(the name bound, the qualified name it stands for) per name an import binds, the longest
    first for each alias: ``import a.b`` binds ``a.b`` and ``a``; ``from .m import n as k``
    binds ``k`` as ``.m.n``. A star import binds nothing that can be named here."""
    if isinstance(statement.names, cst.ImportStar):
        return []
    module = ""
    if isinstance(statement, cst.ImportFrom):
        module = "." * len(statement.relative) + (get_full_name_for_node(statement.module) or ""
                                                  if statement.module is not None else "")
    pairs = []
    for alias in statement.names:
        real = get_full_name_for_node(alias.name)
        if not real:
            continue
        origin = real if not module else module + real if module.endswith(".") else f"{module}.{real}"
        asname = alias.evaluated_alias if alias.asname is not None else None
        if asname is not None:
            pairs.append((asname, origin))
            continue
        parts = real.split(".")
        for cut in range(len(parts), 0, -1):  # `import a.b.c`: a.b.c, a.b and a, each as itself
            bound = ".".join(parts[:cut])
            pairs.append((bound, origin[:len(origin) - len(real)] + bound))
    return pairs


class _Names:
    """``scope.assignments``: the bindings of a name (or of a node's dotted name), in source order."""

    def __init__(self, by_name: dict[str, set[BaseAssignment]]):
        self._by_name = by_name

    def __iter__(self) -> Iterator[BaseAssignment]:
        for bindings in self._by_name.values():
            yield from bindings

    def __getitem__(self, node: str | cst.CSTNode) -> list[BaseAssignment]:
        name = get_full_name_for_node(node)
        found = self._by_name.get(name) if name is not None else None
        return _in_source_order(found) if found else []

    def __contains__(self, node: object) -> bool:
        return isinstance(node, (str, cst.CSTNode)) and bool(self[node])


class Scope:
    """A scope: its bindings by name, its ``global`` / ``nonlocal`` declarations (the scope a name
    is redirected to), the reads recorded in it, and ``count``, the bindings that ended so far
    (a read sees those of its own scope made before it)."""

    node: cst.CSTNode | None = None
    name: str | None = None

    def __init__(self, parent: Scope | None, node: cst.CSTNode | None = None, name: str | None = None):
        self.parent: Scope = parent if parent is not None else self
        self.node, self.name = node, name
        self.module: Scope = self if parent is None or isinstance(parent, BuiltinScope) else parent.module
        self._bindings: dict[str, set[BaseAssignment]] = {}
        self._declared: dict[str, Scope] = {}
        self._reads: dict[int, set[Access]] = {}  # id(node) -> the reads it is
        self.count = 0
        self.path = self._path()

    def _path(self) -> str:
        """What this scope adds before a name it binds, in a qualified name."""
        return ""

    def bind(self, name: str, node: cst.CSTNode, kind: type[Assignment] = Assignment) -> None:
        home = _home(self, name)
        home._bindings.setdefault(name, set()).add(kind(name, home, node, home.count))

    def declare_global(self, name: str) -> None:
        pass

    def declare_nonlocal(self, name: str) -> None:
        pass

    def record(self, access: Access) -> None:
        self._reads.setdefault(id(access.node), set()).add(access)

    def resolve(self, name: str, reader: Scope) -> set[BaseAssignment]:
        """The bindings a read of ``name`` in ``reader`` finds, looking from here outwards."""
        return _lookup(self, name, reader)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _knows(self, name)

    @property
    def assignments(self) -> _Names:
        return _Names(self._bindings)

    def access_of(self, node: cst.CSTNode) -> Access | None:
        """The read ``node`` is, where it is one."""
        found = self._reads.get(id(node))
        return next(iter(found)) if found else None

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Where the name ``node`` reads (a Name, an Attribute, a call's function) comes from."""
        reads = self._reads.get(id(node))
        if reads:
            return {q for read in reads for b in read._sees for q in b.qualified(b.name)}
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return set()
        prefix, found = full_name, set[BaseAssignment]()
        while prefix:  # the longest dotted prefix bound where a read here would look
            if _knows(self, prefix):
                found = _lookup(self, prefix, self)
                break
            prefix = prefix.rpartition(".")[0]
        for binding in found:
            if isinstance(binding, Assignment) and _binds(node, binding.node):
                return binding.qualified(full_name)
        return {q for binding in found for q in binding.qualified(full_name)}


class BuiltinScope(Scope):
    def __init__(self) -> None:
        super().__init__(None)


class GlobalScope(Scope):
    def __init__(self) -> None:
        super().__init__(BuiltinScope())


class _Local(Scope):
    def declare_global(self, name: str) -> None:
        self._declared[name] = self.module

    def declare_nonlocal(self, name: str) -> None:
        self._declared[name] = self.parent


class FunctionScope(_Local):
    def _path(self) -> str:
        return _joined(self.parent.path, self.name, "<locals>")


class ClassScope(_Local):
    def _path(self) -> str:
        return _joined(self.parent.path, self.name)


class ComprehensionScope(_Local):
    def _path(self) -> str:
        return _joined(self.parent.path, "<comprehension>")


class AnnotationScope(_Local):
    def _path(self) -> str:
        return self.parent.path


def _seen_from(scope: Scope, reader: Scope) -> bool:
    """A class body's names are seen from its own annotation scopes only, not from its defs."""
    return not isinstance(scope, ClassScope) or (isinstance(reader, AnnotationScope) and reader.parent is scope)


def _outwards(scope: Scope, reader: Scope) -> Scope:
    """``scope``, or the first scope around it that ``reader`` sees."""
    while not _seen_from(scope, reader):
        scope = scope.parent
    return scope


def _home(scope: Scope, name: str) -> Scope:
    """The scope a binding of ``name`` made in ``scope`` lands in."""
    while name in scope._declared:
        scope = _outwards(scope._declared[name], scope)
    return scope


def _lookup(scope: Scope, name: str, reader: Scope) -> set[BaseAssignment]:
    """The bindings of ``name`` a read in ``reader`` finds, from ``scope`` outwards."""
    while True:
        if isinstance(scope, BuiltinScope):
            found = scope._bindings.get(name)
            if found is None and hasattr(builtins, name):
                found = scope._bindings[name] = {BuiltinAssignment(name, scope)}
            return found or set()
        if name in scope._declared:
            scope = _outwards(scope._declared[name], reader)
        elif scope._bindings.get(name):
            return scope._bindings[name]
        else:
            scope = _outwards(scope.parent, reader)


def _knows(scope: Scope, name: str) -> bool:
    """Whether a read of ``name`` in ``scope`` finds a binding (each hop sees from where it is)."""
    while True:
        if isinstance(scope, BuiltinScope):
            return hasattr(builtins, name)
        if name in scope._declared:
            scope = scope._declared[name]
        elif scope._bindings.get(name):
            return True
        else:
            scope = _outwards(scope.parent, scope)


def _binds(node: cst.CSTNode, statement: cst.CSTNode | None) -> bool:
    """Whether ``statement`` (a binding's node) binds ``node`` itself: it is the node, or an
    import naming it."""
    if node is statement:
        return True
    if isinstance(statement, (cst.Import, cst.ImportFrom)) and not isinstance(statement.names, cst.ImportStar):
        return any(alias.name is node or (alias.asname is not None and alias.asname.name is node)
                   for alias in statement.names)
    return False
