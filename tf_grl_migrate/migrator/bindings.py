"""What each name of a module means (scopes.py's answers), gathered during the planner's one walk
over the libcst tree: ``analysis.Collector``'s walk calls :meth:`Bindings.enter` /
:meth:`Bindings.leave` for every node, and :meth:`Bindings.finish` resolves the reads. Public node
fields only. (Why: docs/design.md, "migrator/bindings.py".)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Callable

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .scopes import (
    Access,
    AnnotationScope,
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    ImportAssignment,
    Scope,
)
from .traversal import NodeMap

# the nodes whose end counts as a binding in their scope: a read after them sees it
_ASSIGNMENT_LIKE = frozenset((
    cst.AnnAssign, cst.AsName, cst.Assign, cst.AugAssign, cst.ClassDef, cst.CompFor, cst.FunctionDef,
    cst.Global, cst.Import, cst.ImportFrom, cst.NamedExpr, cst.Nonlocal, cst.Parameters, cst.WithItem,
    cst.TypeVar, cst.TypeAlias, cst.TypeVarTuple, cst.ParamSpec))

# where a STORE context starts (libcst's ExpressionContextVisitor), and the field it starts on;
# it passes down only through tuples, lists and starred elements
STORE_FIELD: dict[type, str] = {cst.AssignTarget: "target", cst.AnnAssign: "target", cst.AugAssign: "target",
               cst.NamedExpr: "target", cst.AsName: "name", cst.CompFor: "target", cst.For: "target",
               cst.ClassDef: "name", cst.FunctionDef: "name", cst.Param: "name"}

_STORE_THROUGH = frozenset((cst.Tuple, cst.List, cst.StarredElement))

# a comprehension's element is read after its `for` (the walk visits these fields last)
COMPREHENSION_LATE: dict[type, tuple[str, ...]] = {
    cst.ListComp: ("elt",),
    cst.SetComp: ("elt",),
    cst.GeneratorExp: ("elt",),
    cst.DictComp: ("key", "value"),
}

_TYPING = ("typing", "typing_extensions")


def _dotted_names(node: cst.Name | cst.Attribute) -> Iterator[tuple[str, cst.Name | cst.Attribute]]:
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


def _top(dotted: cst.CSTNode) -> str:
    return (get_full_name_for_node(dotted) or "").split(".")[0]


class Bindings:
    """The scope of every node, and every binding and read, from one walk's enter/leave calls.
    Nodes are kept by identity (``id``): the tree outlives the walk, and so do the modules parsed
    from string annotations (``_strings``), so no identity is reused."""

    def __init__(self) -> None:
        self.scope: Scope = GlobalScope()
        self._scope_of: dict[int, Scope] = {}  # id(node) -> its scope (libcst's ScopeProvider's answer)
        self._frames: list[tuple[cst.CSTNode, Scope]] = []  # (node, the scope around it): subtrees in another scope
        self._marked: set[int] = set()  # every node in one of the five below
        self._switch: dict[int, Scope] = {}  # the scope a subtree is in
        self._skip: set[int] = set()  # subtrees scope analysis does not visit
        self._hinted: dict[int, bool] = {}  # in a type hint or not (typing.cast's first argument, ...)
        self._unleft: set[int] = set()  # a comprehension's first `for`: its end binds nothing
        self._after: set[int] = set()  # a `for` target: its end counts as a binding
        self._skipping: list[cst.CSTNode] = []
        self._store: set[int] = set()  # the Names, tuples, lists and starred elements assigned to
        self._deferred: list[tuple[Access, str, cst.Attribute | None, cst.BaseString | None]] = []
        self._attribute: list[cst.Attribute | None] = [None]  # the outermost Attribute being read, per call
        self._annotation: list[bool] = [False]
        self._hint: list[bool] = [False]
        self._literal: set[cst.Subscript] = set()  # typing.Literal[...] subscripts being visited
        self._string: cst.BaseString | None = None  # the string annotation being read
        self._strings: list[cst.Module] = []  # the modules parsed from string annotations, kept alive
        self._typing = False  # `typing` imported: type hints may be written as strings
        self._in_string = False

    def _mark(self, marks: dict[int, Any] | set[int], node: cst.CSTNode, value: object = None) -> None:
        self._marked.add(id(node))
        if isinstance(marks, dict):
            marks[id(node)] = value
        else:
            marks.add(id(node))

    # -- the walk --------------------------------------------------------------------------
    def enter(self, node: cst.CSTNode) -> None:
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
                if isinstance(node, cst.StarredElement):
                    self._store.add(id(node.value))
                elif isinstance(node, (cst.Tuple, cst.List)):
                    self._store.update(id(element.value) for element in node.elements)

    def leave(self, node: cst.CSTNode) -> None:
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
        by_scope: dict[tuple[Scope, str], set[Access]] = {}
        for access, name, attribute, string in self._deferred:
            if attribute is not None:
                for dotted, node in _dotted_names(attribute):
                    if dotted in access.scope:
                        access.node, name = node, dotted
                        break
            if string is not None:
                access.node = string
            by_scope.setdefault((access.scope, name), set()).add(access)
            access.see(name)
            access.scope.record(access)
        for (scope, name), accesses in by_scope.items():
            for assignment in list(scope.resolve(name, scope)):
                assignment.seen_by(accesses)
        self._deferred = []
        return NodeMap(self._scope_of)

    # -- what each node does ---------------------------------------------------------------
    def _defined(self, node: cst.FunctionDef | cst.ClassDef, annotated: Iterable[cst.CSTNode | None]) -> Scope:
        """A def's or class's name, bound here; with type parameters, they and ``annotated`` (the
        parts read in their annotation scope) go there. The scope its own scope sits in."""
        self.scope.bind(node.name.value, node)
        self._name(node.name)
        if not node.type_parameters:
            return self.scope
        outer = AnnotationScope(self.scope, node)
        for part in (node.type_parameters, *annotated):
            if part is not None:
                self._mark(self._switch, part, outer)
        return outer

    def _function(self, node: cst.FunctionDef) -> None:
        outer = self._defined(node, (*node.decorators, node.returns))
        inner = FunctionScope(outer, node, get_full_name_for_node(node.name))
        self._mark(self._switch, node.params, inner)
        self._mark(self._switch, node.body, inner)

    def _lambda(self, node: cst.Lambda) -> None:
        inner = FunctionScope(self.scope, node)
        self._mark(self._switch, node.params, inner)
        self._mark(self._switch, node.body, inner)

    def _class(self, node: cst.ClassDef) -> None:
        outer = self._defined(node, (*node.bases, *node.keywords))
        inner = ClassScope(outer, node, get_full_name_for_node(node.name))
        for statement in node.body.body:
            self._mark(self._switch, statement, inner)

    def _param(self, node: cst.Param) -> None:
        self.scope.bind(node.name.value, node)
        self._name(node.name)
        for part in (node.default, node.annotation):
            if part is not None:
                self._mark(self._switch, part, self.scope.parent)

    def _name(self, name: cst.Name) -> None:  # a def's, class's or parameter's name: neither bound nor read here
        self._scope_of[id(name)] = self.scope
        self._mark(self._skip, name)

    def _arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._mark(self._skip, node.keyword)

    def _declare(self, node: cst.Global | cst.Nonlocal) -> None:
        declare = self.scope.declare_global if isinstance(node, cst.Global) else self.scope.declare_nonlocal
        for item in node.names:
            declare(item.name.value)
            self._mark(self._skip, item)

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
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
            assert isinstance(as_node, (cst.Name, cst.Attribute))  # what an import binds
            for value, _ in _dotted_names(as_node):
                self.scope.bind(value, node, ImportAssignment)

    def _attribute_enter(self, node: cst.Attribute) -> None:
        if self._attribute[-1] is None:
            self._attribute[-1] = node
        self._mark(self._skip, node.attr)

    def _attribute_leave(self, node: cst.Attribute) -> None:
        if self._attribute[-1] is node:
            self._attribute[-1] = None

    def _call(self, node: cst.Call) -> None:
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

    def _call_leave(self, node: cst.Call) -> None:
        self._attribute.pop()
        self._hint.pop()

    def _subscript(self, node: cst.Subscript) -> None:
        hint = False
        if self._typing and isinstance(node.value, cst.Name):
            names = self.scope.qualified_names(node.value)
            hint = any(n.startswith(("typing.", "typing_extensions.")) for n in names)
            if "typing.Literal" in names or "typing_extensions.Literal" in names:
                self._literal.add(node)
        self._hint.append(hint)

    def _subscript_leave(self, node: cst.Subscript) -> None:
        self._hint.pop()
        self._literal.discard(node)

    def _annotation_enter(self, node: cst.Annotation) -> None:
        self._annotation.append(True)

    def _annotation_leave(self, node: cst.Annotation) -> None:
        self._annotation.pop()

    def _simple_string(self, node: cst.SimpleString) -> None:
        self._string_annotation(node)

    def _concatenated_string(self, node: cst.ConcatenatedString) -> None:
        if self._string_annotation(node):
            self._mark(self._skip, node.left)
            self._mark(self._skip, node.right)

    def _string_annotation(self, node: cst.SimpleString | cst.ConcatenatedString) -> bool:
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

    def _walk_string(self, node: cst.CSTNode) -> None:
        self.enter(node)
        for child in node.children:
            self._walk_string(child)
        self.leave(node)

    def _name_read(self, node: cst.Name) -> None:
        if id(node) in self._store:
            self.scope.bind(node.value, node)
        else:
            self._deferred.append((Access(node, self.scope), node.value, self._attribute[-1], self._string))

    def _comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> None:
        for_in = node.for_in
        self._scope_of[id(for_in)] = self.scope
        self._mark(self._unleft, for_in)
        inner = ComprehensionScope(self.scope, node)
        self._mark(self._switch, for_in.target, inner)
        self._mark(self._after, for_in.target)
        for part in (*for_in.ifs, for_in.inner_for_in, *(getattr(node, f) for f in COMPREHENSION_LATE[type(node)])):
            if part is not None:
                self._mark(self._switch, part, inner)

    def _for(self, node: cst.For) -> None:
        self._mark(self._after, node.target)

    def _type_alias(self, node: cst.TypeAlias) -> None:
        self.scope.bind(node.name.value, node)
        self._mark(self._skip, node.name)
        inner = AnnotationScope(self.scope, node)
        for part in (node.type_parameters, node.value):
            if part is not None:
                self._mark(self._switch, part, inner)

    def _type_var(self, node: cst.TypeVar | cst.TypeVarTuple | cst.ParamSpec) -> None:
        self.scope.bind(node.name.value, node)
        self._mark(self._skip, node.name)


_ENTER: dict[type, Callable] = {
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
_LEAVE: dict[type, Callable] = {
    cst.Attribute: Bindings._attribute_leave, cst.Call: Bindings._call_leave,
    cst.Subscript: Bindings._subscript_leave, cst.Annotation: Bindings._annotation_leave,
}
