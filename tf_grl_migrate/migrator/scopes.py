"""The answers about names libcst's ScopeProvider gives, as plain objects: the scopes of a module
(global, function, class, comprehension, annotation, and the builtins around them), the bindings
in each (``Assignment``, ``ImportAssignment``, ``BuiltinAssignment``), the reads (``Access``)
and the bindings each may see, and the qualified name a name has where it was imported from.
Filled by bindings.Bindings during the planner's walk; read by the planner and the idioms.
Reads and bindings are listed in source order."""

from __future__ import annotations

import builtins
import itertools

import libcst as cst
from libcst.helpers import get_full_name_for_node

_made = itertools.count()  # bindings and reads in the order they are found (by the walk: source order)


def _in_order(items) -> list:
    return sorted(items, key=_seq)


def _seq(item) -> int:
    return item.seq


class Access:
    """A read of a name: ``node`` (a Name, or the dotted Attribute an import binds, or the string
    annotation it was read in) and the bindings it may see (``referents``, in source order)."""

    __slots__ = ("node", "scope", "_referents", "index", "seq")

    def __init__(self, node, scope: Scope):
        self.node, self.scope, self.index, self.seq = node, scope, scope.count, next(_made)
        self._referents: set = set()

    @property
    def referents(self) -> list:
        return _in_order(self._referents)

    def see(self, name: str) -> None:
        found = self.scope.resolve(name, self.scope)
        previous = {a for a in found if a.scope is not self.scope or a.index < self.index}
        if not previous and found and self.scope.parent is not self.scope:
            previous = self.scope.parent.resolve(name, self.scope)
        self._referents |= previous


class BaseAssignment:
    index = -1

    def __init__(self, name: str, scope: Scope):
        self.name, self.scope, self.seq = name, scope, next(_made)
        self._references: set[Access] = set()

    @property
    def references(self) -> list:
        """The reads that may see this binding, in source order."""
        return _in_order(self._references)

    def seen_by(self, accesses: set) -> None:
        later = {a for a in accesses if a.scope is not self.scope or self.index < a.index}
        self._references |= later
        earlier = accesses - later
        if earlier and self.scope.parent is not self.scope:
            for shadowed in self.scope.parent[self.name]:
                shadowed.seen_by(earlier)


class Assignment(BaseAssignment):
    """A binding made by ``node``: a stored Name, a def or class, a parameter, an import."""

    def __init__(self, name: str, scope: Scope, node, index: int):
        self.node, self.index = node, index
        super().__init__(name, scope)

    def qualified(self, full_name: str) -> set[str]:
        prefix = self.scope.prefix
        return {f"{prefix}.{full_name}" if prefix else full_name}


class ImportAssignment(Assignment):
    """A binding made by an ``import`` statement (``node``), named as the statement binds it."""

    def qualified(self, full_name: str) -> set[str]:
        module = ""
        if isinstance(self.node, cst.ImportFrom):
            if self.node.module:
                module = get_full_name_for_node(self.node.module) or ""
            if self.node.relative:
                module = "." * len(self.node.relative) + module
        results = set()
        if isinstance(self.node.names, cst.ImportStar):
            return results
        for alias in self.node.names:
            real = get_full_name_for_node(alias.name)
            if not real:
                continue
            parts = real.split(".")
            for real_name in (".".join(parts[:i]) for i in range(len(parts), 0, -1)):
                as_name = real_name
                if module and module.endswith("."):
                    real_name = f"{module}{real_name}"
                elif module:
                    real_name = f"{module}.{real_name}"
                if alias.asname:
                    evaluated = alias.evaluated_alias
                    if evaluated is not None:
                        as_name = evaluated
                if full_name.startswith(as_name):
                    rest = full_name.split(as_name, 1)[1]
                    if rest and not rest.startswith("."):
                        continue
                    rest = rest.lstrip(".")
                    results.add(f"{real_name}.{rest}" if rest else real_name)
                    break
        return results


class BuiltinAssignment(BaseAssignment):
    def qualified(self, full_name: str) -> set[str]:
        return {f"builtins.{self.name}"}


class _Names:
    """``scope.assignments``: by a name or a node's dotted name, in source order."""

    def __init__(self, by_name: dict):
        self._by_name = by_name

    def __iter__(self):
        for values in self._by_name.values():
            yield from values

    def __getitem__(self, node) -> list:
        name = get_full_name_for_node(node)
        return _in_order(self._by_name[name]) if name in self._by_name else []

    def __contains__(self, node) -> bool:
        return len(self[node]) > 0


class Scope:
    node = None
    name = None

    def __init__(self, parent: Scope):
        self.parent = parent
        self.globals = parent.globals
        self._assignments: dict[str, set] = {}
        self._accesses_by_node: dict = {}  # id(node) -> the reads it is
        self.count = 0  # bindings ended so far: a read sees those of its own scope made before it
        self.prefix = ""

    def bind(self, name: str, node, kind: type = Assignment) -> None:
        target = self.target(name)
        target._assignments.setdefault(name, set()).add(kind(name, target, node, target.count))

    def target(self, name: str) -> Scope:
        return self

    def record(self, access: Access) -> None:
        self._accesses_by_node.setdefault(id(access.node), set()).add(access)

    def visible_from(self, scope: Scope) -> bool:
        return True

    def next_visible(self, scope: Scope, first: Scope | None = None) -> Scope:
        parent = first if first is not None else self.parent
        while not parent.visible_from(scope):
            parent = parent.parent
        return parent

    def __getitem__(self, name: str) -> set:
        return self.resolve(name, self)

    def declare_global(self, name: str) -> None:
        pass

    def declare_nonlocal(self, name: str) -> None:
        pass

    @property
    def assignments(self) -> _Names:
        return _Names(self._assignments)

    def access_of(self, node) -> Access | None:
        """The read ``node`` is, where it is one."""
        found = self._accesses_by_node.get(id(node))
        return next(iter(found)) if found else None

    def qualified_names(self, node) -> set[str]:
        """libcst's ``get_qualified_names_for``, as plain strings."""
        accesses = self._accesses_by_node.get(id(node))
        if accesses:
            return {q for access in accesses for ref in access._referents for q in ref.qualified(ref.name)}
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return set()
        found, prefix = set(), full_name
        while prefix:
            if prefix in self:
                found = self[prefix]
                break
            cut = prefix.rfind(".")
            prefix = None if cut == -1 else prefix[:cut]
        for assignment in found:
            if isinstance(assignment, Assignment) and _is_assignment(node, assignment.node):
                return assignment.qualified(full_name)
        results = set()
        for assignment in list(found):
            results |= assignment.qualified(full_name)
        return results


class BuiltinScope(Scope):
    def __init__(self, globals: Scope):
        self.globals = globals
        super().__init__(parent=self)

    def __contains__(self, name: str) -> bool:
        return hasattr(builtins, name)

    def resolve(self, name: str, scope: Scope) -> set:
        if name in self._assignments:
            return self._assignments[name]
        if hasattr(builtins, name):
            found = self._assignments[name] = {BuiltinAssignment(name, self)}
            return found
        return set()


class GlobalScope(Scope):
    def __init__(self):
        self.globals = self
        super().__init__(parent=BuiltinScope(self))

    def __contains__(self, name: str) -> bool:
        if name in self._assignments:
            return len(self._assignments[name]) > 0
        return name in self.next_visible(self)

    def resolve(self, name: str, scope: Scope) -> set:
        if name in self._assignments:
            return self._assignments[name]
        return self.next_visible(scope)[name]


class LocalScope(Scope):
    def __init__(self, parent: Scope, node, name: str | None = None):
        super().__init__(parent)
        self.name, self.node = name, node
        self._overwrites: dict[str, Scope] = {}
        self.prefix = self._prefix()

    def _prefix(self) -> str:
        return ".".join(filter(None, [self.parent.prefix, self.name, "<locals>"]))

    def declare_global(self, name: str) -> None:
        self._overwrites[name] = self.globals

    def declare_nonlocal(self, name: str) -> None:
        self._overwrites[name] = self.parent

    def target(self, name: str) -> Scope:
        if name in self._overwrites:
            return self.next_visible(self, self._overwrites[name]).target(name)
        return self

    def __contains__(self, name: str) -> bool:
        if name in self._overwrites:
            return name in self._overwrites[name]
        if name in self._assignments:
            return len(self._assignments[name]) > 0
        return name in self.next_visible(self)

    def resolve(self, name: str, scope: Scope) -> set:
        if name in self._overwrites:
            return self.next_visible(scope, self._overwrites[name]).resolve(name, scope)
        if name in self._assignments:
            return self._assignments[name]
        return self.next_visible(scope).resolve(name, scope)


class FunctionScope(LocalScope):
    pass


class ClassScope(LocalScope):
    def visible_from(self, scope: Scope) -> bool:
        return scope.parent is self and isinstance(scope, AnnotationScope)

    def _prefix(self) -> str:
        return ".".join(filter(None, [self.parent.prefix, self.name]))


class ComprehensionScope(LocalScope):
    def _prefix(self) -> str:
        return ".".join(filter(None, [self.parent.prefix, "<comprehension>"]))


class AnnotationScope(LocalScope):
    def _prefix(self) -> str:
        return self.parent.prefix


def _is_assignment(node, assignment_node) -> bool:
    if node is assignment_node:
        return True
    if isinstance(assignment_node, (cst.Import, cst.ImportFrom)):
        if isinstance(assignment_node.names, cst.ImportStar):
            return False
        for alias in assignment_node.names:
            if alias.name is node or (alias.asname is not None and alias.asname.name is node):
                return True
    return False
