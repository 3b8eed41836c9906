"""What each name of a module means: its scopes, who binds each name, who reads each binding,
and what a name is called where it was imported from. Gathered during the planner's one walk
over the libcst tree (``analysis._Collector`` calls :meth:`Bindings.enter` / :meth:`Bindings.leave`
for every node), reading public node fields only.

The answers are those of libcst's ``ScopeProvider`` on the same nodes: its rules (which scope
a name is bound in, that a read sees the bindings made before it in its own scope, how an
``import a.b`` binds, the qualified names) are followed here, and tests/test_engine.py compares
the two on every case and on modules of the standard library. libcst's own provider costs 4.5
parses of the module through its public road; this costs a fraction of one walk.
"""

from __future__ import annotations

import builtins
import itertools

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .traversal import NodeMap

# the nodes whose end counts as a binding in their scope: a read after them sees it
_ASSIGNMENT_LIKE = frozenset((
    cst.AnnAssign, cst.AsName, cst.Assign, cst.AugAssign, cst.ClassDef, cst.CompFor, cst.FunctionDef,
    cst.Global, cst.Import, cst.ImportFrom, cst.NamedExpr, cst.Nonlocal, cst.Parameters, cst.WithItem,
    cst.TypeVar, cst.TypeAlias, cst.TypeVarTuple, cst.ParamSpec))

# where a STORE context starts (libcst's ExpressionContextVisitor), and the field it starts on;
# it passes down only through tuples, lists and starred elements
STORE_FIELD = {cst.AssignTarget: "target", cst.AnnAssign: "target", cst.AugAssign: "target",
               cst.NamedExpr: "target", cst.AsName: "name", cst.CompFor: "target", cst.For: "target",
               cst.ClassDef: "name", cst.FunctionDef: "name", cst.Param: "name"}

_STORE_THROUGH = frozenset((cst.Tuple, cst.List, cst.StarredElement))

# a comprehension's element is read after its `for` (the walk visits these fields last)
COMPREHENSION_LATE = {cst.ListComp: ("elt",), cst.SetComp: ("elt",), cst.GeneratorExp: ("elt",),
                      cst.DictComp: ("key", "value")}

_TYPING = ("typing", "typing_extensions")

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
    def __init__(self, name: str, scope: Scope, node, index: int, as_name):
        super().__init__(name, scope, node, index)
        self.as_name = as_name

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
    """``scope.assignments`` / ``scope.accesses``: by a name or a node's dotted name, in source order."""

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
        self._accesses_by_name: dict[str, set] = {}
        self._accesses_by_node: dict = {}
        self.count = 0  # bindings ended so far: a read sees those of its own scope made before it
        self.prefix = ""

    def bind(self, name: str, node) -> None:
        target = self.target(name)
        target._assignments.setdefault(name, set()).add(Assignment(name, target, node, target.count))

    def bind_import(self, name: str, node, as_name) -> None:
        target = self.target(name)
        target._assignments.setdefault(name, set()).add(ImportAssignment(name, target, node, target.count, as_name))

    def target(self, name: str) -> Scope:
        return self

    def record(self, name: str, access: Access) -> None:
        self._accesses_by_name.setdefault(name, set()).add(access)
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

    @property
    def accesses(self) -> _Names:
        return _Names(self._accesses_by_name)

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


def _dotted_names(node):
    """("a.b", <a.b>), ("a", <a>) for ``a.b``; through a call's function (``a.b().c``)."""
    if isinstance(node, cst.Name):
        yield node.value, node
        return
    value = node.value
    if isinstance(value, cst.Call):
        value = value.func
        if isinstance(value, (cst.Attribute, cst.Name)):
            yield from _dotted_names(value)
    elif isinstance(value, (cst.Attribute, cst.Name)):
        names = _dotted_names(value)
        first = next(names, None)
        if first is not None:
            yield f"{first[0]}.{node.attr.value}", node
            yield first
            yield from names


def _top(dotted) -> str:
    return (get_full_name_for_node(dotted) or "").split(".")[0]


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


class Bindings:
    """The scope of every node, and every binding and read, from one walk's enter/leave calls.
    Nodes are kept by identity (``id``): the tree outlives the walk, and so do the modules parsed
    from string annotations (``_strings``), so no identity is reused."""

    def __init__(self):
        self.scope: Scope = GlobalScope()
        self._scope_of: dict[int, Scope] = {}  # id(node) -> its scope (libcst's ScopeProvider's answer)
        self._frames: list = []  # (node, the scope around it): subtrees in another scope
        self._marked: set[int] = set()  # every node in one of the five below
        self._switch: dict[int, Scope] = {}  # the scope a subtree is in
        self._skip: set[int] = set()  # subtrees scope analysis does not visit
        self._hinted: dict[int, bool] = {}  # in a type hint or not (typing.cast's first argument, ...)
        self._unleft: set[int] = set()  # a comprehension's first `for`: its end binds nothing
        self._after: set[int] = set()  # a `for` target: its end counts as a binding
        self._skipping: list = []
        self._store: set[int] = set()  # the Names, tuples, lists and starred elements assigned to
        self._deferred: list = []
        self._attribute: list = [None]  # the outermost Attribute being read, per call
        self._annotation: list = [False]
        self._hint: list = [False]
        self._literal: set = set()  # typing.Literal[...] subscripts being visited
        self._string = None  # the string annotation being read
        self._strings: list = []  # the modules parsed from string annotations, kept alive
        self._typing = False  # `typing` imported: type hints may be written as strings
        self._in_string = False

    def _mark(self, marks, node, value=None) -> None:
        self._marked.add(id(node))
        if isinstance(marks, dict):
            marks[id(node)] = value
        else:
            marks.add(id(node))

    # -- the walk --------------------------------------------------------------------------
    def enter(self, node) -> None:
        if self._skipping:
            return
        nid = id(node)
        if nid in self._marked:
            if nid in self._skip:
                self._skipping.append(node)
                return
            switch = self._switch.pop(nid, None)
            if switch is not None:
                self._frames.append((node, self.scope))
                self.scope = switch
            hinted = self._hinted.get(nid)
            if hinted is not None:
                self._hint.append(hinted)
        kind = type(node)
        handler = _ENTER.get(kind)
        if handler is not None:
            handler(self, node)
        if not self._in_string:
            field = STORE_FIELD.get(kind)
            if field is not None:
                self._store.add(id(getattr(node, field)))
            elif kind in _STORE_THROUGH and nid in self._store:
                if kind is cst.StarredElement:
                    self._store.add(id(node.value))
                else:
                    self._store.update(id(element.value) for element in node.elements)

    def leave(self, node) -> None:
        if self._skipping:
            if self._skipping[-1] is node:
                self._skipping.pop()
            return
        nid = id(node)
        marked = nid in self._marked
        if marked and nid in self._unleft:
            return
        self._scope_of[nid] = self.scope
        kind = type(node)
        if kind in _ASSIGNMENT_LIKE:
            self.scope.count += 1
        handler = _LEAVE.get(kind)
        if handler is not None:
            handler(self, node)
        if marked:
            if nid in self._after:
                self.scope.count += 1
            if nid in self._hinted:
                self._hint.pop()
            if self._frames and self._frames[-1][0] is node:
                self.scope = self._frames.pop()[1]

    def finish(self) -> NodeMap:
        """Resolve every read to the bindings it may see; the scope of every node."""
        by_scope: dict = {}
        for access, attribute, string in self._deferred:
            name = access.node.value
            if attribute is not None:
                for dotted, node in _dotted_names(attribute):
                    if dotted in access.scope:
                        access.node, name = node, dotted
                        break
            if string is not None:
                access.node = string
            by_scope.setdefault((access.scope, name), set()).add(access)
            access.see(name)
            access.scope.record(name, access)
        for (scope, name), accesses in by_scope.items():
            for assignment in list(scope.resolve(name, scope)):
                assignment.seen_by(accesses)
        self._deferred = []
        return NodeMap(self._scope_of)

    # -- what each node does ---------------------------------------------------------------
    def _function(self, node) -> None:
        self.scope.bind(node.name.value, node)
        self._name(node.name)
        outer = self.scope
        if node.type_parameters:
            outer = AnnotationScope(self.scope, node)
            for part in (node.type_parameters, *node.decorators, node.returns):
                if part is not None:
                    self._mark(self._switch, part, outer)
        inner = FunctionScope(outer, node, get_full_name_for_node(node.name))
        self._mark(self._switch, node.params, inner)
        self._mark(self._switch, node.body, inner)

    def _lambda(self, node) -> None:
        inner = FunctionScope(self.scope, node)
        self._mark(self._switch, node.params, inner)
        self._mark(self._switch, node.body, inner)

    def _class(self, node) -> None:
        self.scope.bind(node.name.value, node)
        self._name(node.name)
        outer = self.scope
        if node.type_parameters:
            outer = AnnotationScope(self.scope, node)
            for part in (node.type_parameters, *node.bases, *node.keywords):
                self._mark(self._switch, part, outer)
        inner = ClassScope(outer, node, get_full_name_for_node(node.name))
        for statement in node.body.body:
            self._mark(self._switch, statement, inner)

    def _param(self, node) -> None:
        self.scope.bind(node.name.value, node)
        self._name(node.name)
        for part in (node.default, node.annotation):
            if part is not None:
                self._mark(self._switch, part, self.scope.parent)

    def _name(self, name) -> None:  # a def's, class's or parameter's name: neither bound nor read here
        self._scope_of[id(name)] = self.scope
        self._mark(self._skip, name)

    def _arg(self, node) -> None:
        if node.keyword is not None:
            self._mark(self._skip, node.keyword)

    def _declare(self, node) -> None:
        declare = self.scope.declare_global if isinstance(node, cst.Global) else self.scope.declare_nonlocal
        for item in node.names:
            declare(item.name.value)
            self._mark(self._skip, item)

    def _import(self, node) -> None:
        if isinstance(node, cst.ImportFrom):
            if node.module is not None:
                self._mark(self._skip, node.module)
                self._typing |= not node.relative and _top(node.module) in _TYPING
            for dot in node.relative:
                self._mark(self._skip, dot)
        if isinstance(node.names, cst.ImportStar):
            self._mark(self._skip, node.names)
            return
        for alias in node.names:
            self._scope_of[id(alias)] = self.scope
            self._mark(self._skip, alias)
            if isinstance(node, cst.Import):
                self._typing |= _top(alias.name) in _TYPING
            as_node = alias.asname.name if alias.asname is not None else alias.name
            for value, _ in _dotted_names(as_node):
                self.scope.bind_import(value, node, as_node)

    def _attribute_enter(self, node) -> None:
        if self._attribute[-1] is None:
            self._attribute[-1] = node
        self._mark(self._skip, node.attr)

    def _attribute_leave(self, node) -> None:
        if self._attribute[-1] is node:
            self._attribute[-1] = None

    def _call(self, node) -> None:
        self._attribute.append(None)
        self._hint.append(False)
        if not self._typing:
            return
        names = self.scope.qualified_names(node)
        if "typing.NewType" in names or "typing.TypeVar" in names:
            if node.args:
                self._mark(self._skip, node.args[0])
            for arg in node.args[1:]:
                self._mark(self._hinted, arg, True)
        elif "typing.cast" in names and node.args:
            self._mark(self._hinted, node.args[0], True)

    def _call_leave(self, node) -> None:
        self._attribute.pop()
        self._hint.pop()

    def _subscript(self, node) -> None:
        hint = False
        if self._typing and isinstance(node.value, cst.Name):
            names = self.scope.qualified_names(node.value)
            hint = any(n.startswith(("typing.", "typing_extensions.")) for n in names)
            if "typing.Literal" in names or "typing_extensions.Literal" in names:
                self._literal.add(node)
        self._hint.append(hint)

    def _subscript_leave(self, node) -> None:
        self._hint.pop()
        self._literal.discard(node)

    def _annotation_enter(self, node) -> None:
        self._annotation.append(True)

    def _annotation_leave(self, node) -> None:
        self._annotation.pop()

    def _simple_string(self, node) -> None:
        self._string_annotation(node)

    def _concatenated_string(self, node) -> None:
        if self._string_annotation(node):
            self._mark(self._skip, node.left)
            self._mark(self._skip, node.right)

    def _string_annotation(self, node) -> bool:
        if not (self._hint[-1] or self._annotation[-1]) or self._literal:
            return False
        value = node.evaluated_value
        if not value:
            return False
        top = self._string is None
        if top:
            self._string = node
        try:
            module = cst.parse_module(value)
        except cst.ParserSyntaxError:
            pass
        else:
            self._strings.append(module)
            was, self._in_string = self._in_string, True
            self._walk_string(module)
            self._in_string = was
        if top:
            self._string = None
        return True

    def _walk_string(self, node) -> None:
        self.enter(node)
        for child in node.children:
            self._walk_string(child)
        self.leave(node)

    def _name_read(self, node) -> None:
        if id(node) in self._store:
            self.scope.bind(node.value, node)
        else:
            self._deferred.append((Access(node, self.scope), self._attribute[-1], self._string))

    def _comprehension(self, node) -> None:
        for_in = node.for_in
        self._scope_of[id(for_in)] = self.scope
        self._mark(self._unleft, for_in)
        inner = ComprehensionScope(self.scope, node)
        self._mark(self._switch, for_in.target, inner)
        self._mark(self._after, for_in.target)
        for part in (*for_in.ifs, for_in.inner_for_in, *(getattr(node, f) for f in COMPREHENSION_LATE[type(node)])):
            if part is not None:
                self._mark(self._switch, part, inner)

    def _for(self, node) -> None:
        self._mark(self._after, node.target)

    def _type_alias(self, node) -> None:
        self.scope.bind(node.name.value, node)
        self._mark(self._skip, node.name)
        inner = AnnotationScope(self.scope, node)
        for part in (node.type_parameters, node.value):
            if part is not None:
                self._mark(self._switch, part, inner)

    def _type_var(self, node) -> None:
        self.scope.bind(node.name.value, node)
        self._mark(self._skip, node.name)


_ENTER = {
    cst.FunctionDef: Bindings._function, cst.Lambda: Bindings._lambda, cst.ClassDef: Bindings._class,
    cst.Param: Bindings._param, cst.Arg: Bindings._arg, cst.Global: Bindings._declare,
    cst.Nonlocal: Bindings._declare, cst.Import: Bindings._import, cst.ImportFrom: Bindings._import,
    cst.Attribute: Bindings._attribute_enter, cst.Call: Bindings._call, cst.Subscript: Bindings._subscript,
    cst.Annotation: Bindings._annotation_enter, cst.SimpleString: Bindings._simple_string,
    cst.ConcatenatedString: Bindings._concatenated_string, cst.Name: Bindings._name_read,
    cst.ListComp: Bindings._comprehension, cst.SetComp: Bindings._comprehension,
    cst.GeneratorExp: Bindings._comprehension, cst.DictComp: Bindings._comprehension,
    cst.For: Bindings._for, cst.TypeAlias: Bindings._type_alias, cst.TypeVar: Bindings._type_var,
    cst.TypeVarTuple: Bindings._type_var, cst.ParamSpec: Bindings._type_var,
}
_LEAVE = {
    cst.Attribute: Bindings._attribute_leave, cst.Call: Bindings._call_leave,
    cst.Subscript: Bindings._subscript_leave, cst.Annotation: Bindings._annotation_leave,
}
