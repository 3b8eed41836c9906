"""Reading libcst trees faster than libcst's public road, with the same answers (each checked
against libcst's own in tests/test_engine.py): visitors that find their hooks once per node type
and walk without rebuilding nodes, and the positions of the few nodes a diagnostic names."""

from __future__ import annotations

import dataclasses
import re
from contextlib import contextmanager

import libcst as cst


class Quick:
    """A mixin placed first on a libcst visitor: libcst looks up ``visit_<Node>_<field>`` and
    ``leave_<Node>_<field>`` by name for every field of every node it walks, and calls libcst's
    no-op stub for each. The class's real such methods are listed once, and only those are called
    (a fifth of a walk saved; the same work done)."""

    _attribute_hooks: frozenset = frozenset()
    _hooked_types: frozenset = frozenset()  # the node types named in those hooks

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._find_attribute_hooks()

    @classmethod
    def _find_attribute_hooks(cls) -> None:
        hooks = frozenset(  # libcst's typed stubs for every (node, field) are marked no-ops
            tuple(name.split("_", 2)) for name in dir(cls)
            if name.startswith(("visit_", "leave_")) and name.count("_") >= 2 and name.split("_", 2)[1][:1].isupper()
            and not getattr(getattr(cls, name), "_is_no_op", False))
        type.__setattr__(cls, "_attribute_hooks", hooks)
        type.__setattr__(cls, "_hooked_types", frozenset(node for _, node, _ in hooks))

    def on_visit_attribute(self, node, attribute) -> None:
        if self._attribute_hooks and ("visit", type(node).__name__, attribute) in self._attribute_hooks:
            getattr(self, f"visit_{type(node).__name__}_{attribute}")(node)

    def on_leave_attribute(self, original_node, attribute) -> None:
        if self._attribute_hooks and ("leave", type(original_node).__name__, attribute) in self._attribute_hooks:
            getattr(self, f"leave_{type(original_node).__name__}_{attribute}")(original_node)


class _Hooks(type(cst.CSTVisitor)):
    """A hook set on (or deleted from) a visitor class later, as a test patching ``visit_Yield``
    does, drops the hooks cached by that class and its subclasses (field hooks are found again)."""

    def __setattr__(cls, name, value):
        super().__setattr__(name, value)
        if name.startswith(("visit_", "leave_")):
            cls._forget()

    def __delattr__(cls, name):
        super().__delattr__(name)
        if name.startswith(("visit_", "leave_")):
            cls._forget()

    def _forget(cls):
        stack = [cls]
        while stack:
            klass = stack.pop()
            if "_visits" in klass.__dict__:
                klass._visits.clear()
                klass._leaves.clear()
                klass._find_attribute_hooks()
            stack.extend(klass.__subclasses__())


class QuickVisitor(Quick, cst.CSTVisitor, metaclass=_Hooks):
    """A read-only visitor that also finds its ``visit_<Node>`` / ``leave_<Node>`` once per node
    type: libcst formats the name and looks it up for every node, and calls its typed no-op stub
    for every type the visitor does not handle. Placed last among a visitor's bases, so that the
    ``on_leave`` of a base such as libcst's ScopeVisitor still runs first and reaches this one."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        type.__setattr__(cls, "_visits", {})
        type.__setattr__(cls, "_leaves", {})

    def on_visit(self, node) -> bool:
        hook = self._visits.get(type(node), _UNKNOWN)
        if hook is _UNKNOWN:
            hook = self._visits[type(node)] = _real_hook(type(self), "visit_", node)
        return hook is None or hook(self, node) is not False

    def on_leave(self, original_node) -> None:
        hook = self._leaves.get(type(original_node), _UNKNOWN)
        if hook is _UNKNOWN:
            hook = self._leaves[type(original_node)] = _real_hook(type(self), "leave_", original_node)
        if hook is not None:
            hook(self, original_node)

    def walk(self, node) -> None:
        """``node.visit(self)``, without what libcst's walk does for a transformer: it builds a new
        copy of every node it leaves (validating each) even for a visitor, which drops them. The
        children are read field by field in libcst's own order (recorded once per node type)."""
        _walk(self, node, self._hooked_types)


def _walk(visitor, node, hooked: frozenset) -> None:
    if visitor.on_visit(node):
        known = _FIELDS.get(type(node))
        fields = None
        if known is not None:
            fields = known[1].get(tuple([_is_set(getattr(node, f)) for f in known[0]]) if known[0] else ())
        attributes = hooked and type(node).__name__ in hooked
        for field in _fields(node) if fields is None else fields:
            if attributes:
                visitor.on_visit_attribute(node, field)
            value = getattr(node, field)
            if isinstance(value, (tuple, list)):
                for child in value:
                    _walk(visitor, child, hooked)
            elif value is not None and value.__class__ is not cst.MaybeSentinel:
                _walk(visitor, value, hooked)
            if attributes:
                visitor.on_leave_attribute(node, field)
    visitor.on_leave(node)


class _SelfWalking:
    """Visitor classes whose every ``node.visit(visitor)`` takes the walk above: those whose own
    hooks visit children themselves (``node.body.visit(self)``, as libcst's ScopeVisitor does), which
    ``QuickVisitor.walk`` cannot reach. ``CSTNode.visit`` and ``Module.visit`` get a dispatcher once,
    on the first registration; any other visitor goes on to libcst's own method, untouched."""

    classes: set[type] = set()

    @classmethod
    def register(cls, visitor_class: type) -> type:
        if not issubclass(visitor_class, Quick):
            raise TypeError(f"{visitor_class.__name__} must have traversal.Quick among its bases")
        for klass in (cst.CSTNode, cst.Module):
            original = klass.__dict__["visit"]
            if getattr(original, "_walks", None) is not cls.classes:
                klass.visit = cls._dispatcher(original)
        cls.classes.add(visitor_class)
        return visitor_class

    @classmethod
    def _dispatcher(cls, original):
        classes = cls.classes

        def visit(self, visitor):
            if visitor.__class__ not in classes:
                return original(self, visitor)
            _walk(visitor, self, visitor._hooked_types)
            return self

        visit._walks = classes
        visit.__doc__, visit.__name__, visit.__qualname__ = original.__doc__, original.__name__, original.__qualname__
        return visit


walks_itself = _SelfWalking.register


_FIELDS: dict[type, tuple] = {}  # node type -> (fields whose presence picks the order, {presence: fields in order})


class _FieldOrder(cst.CSTVisitor):
    """Records the fields a node's own ``_visit_and_replace_children`` visits, in its order."""

    def __init__(self):
        self.fields = []

    def on_visit(self, node):
        return False

    def on_leave(self, original_node):
        pass

    def on_visit_attribute(self, node, attribute):
        self.fields.append(attribute)

    def on_leave_attribute(self, original_node, attribute):
        pass


def _is_set(value) -> bool:
    return value is not None and value.__class__ is not cst.MaybeSentinel


def _fields(node) -> tuple:
    """The fields libcst visits on ``node``, in its order. A type may visit a field only when it
    is set (an f-string's ``format_spec``), so the order is kept per type and per presence of
    the fields seen unset and unvisited (each such field joins the key; a field set but never
    visited holds no node, a ``str``)."""
    order = _FieldOrder()
    node._visit_and_replace_children(order)
    fields = tuple(order.fields)
    unset = {f.name for f in dataclasses.fields(node) if f.name not in fields and not _is_set(getattr(node, f.name))}
    keys, orders = _FIELDS.get(type(node), ((), {}))
    if not unset <= set(keys):
        keys, orders = tuple(sorted(unset.union(keys))), {}
    orders[tuple([_is_set(getattr(node, f)) for f in keys])] = fields
    _FIELDS[type(node)] = (keys, orders)
    return fields


_UNKNOWN = object()


def _real_hook(cls, prefix: str, node):
    hook = getattr(cls, prefix + type(node).__name__, None)
    return None if hook is None or getattr(hook, "_is_no_op", False) else hook


try:  # the plain code generator's state, to track lines while generating one statement
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - a libcst that moved it: positions take the public road
    CodegenState = None

_NEWLINE = re.compile(r"\r\n?|\n")


def _newlines(text: str) -> int:
    return text.count("\n") + text.count("\r") - text.count("\r\n")


class _Found(Exception):
    pass


if CodegenState is not None:
    class _Finder(CodegenState):
        """Generates code like libcst's PositionProvider does, keeping only the line and column,
        and stops at the one node asked for with the start PositionProvider records for it (its
        syntactic position where it has one, else where its code starts)."""

        def __init__(self, module, line: int, target):
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.line, self.column, self.target, self.start = line, 0, target, None

        def add_indent_tokens(self):
            for token in self.indent_tokens:
                self.add_token(token)

        def add_token(self, value):
            if "\n" in value or "\r" in value:
                segments = _NEWLINE.split(value)
                self.line += len(segments) - 1
                self.column = len(segments[-1])
            else:
                self.column += len(value)

        def before_codegen(self, node):
            if node is self.target:
                self.start = (self.line, self.column)

        def after_codegen(self, node):
            if node is self.target:
                raise _Found(self.start)

        @contextmanager
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            if node is self.target:
                if start_node is None:
                    raise _Found((self.line, self.column))
                self.target = start_node  # an indented block starts where its first statement does
            yield


class Positions:
    """Where a node starts (line, 1-based; column, 0-based), as ``PositionProvider`` says, without
    its pass over the whole module: a diagnostic needs the positions of a few nodes, and libcst's
    provider records a range for every node (about twice a parse). Here the top-level statements
    before the node's own are generated plainly to count their lines (once, cached), and only that
    statement is generated again, tracking lines and columns until the node is reached."""

    def __init__(self, module: cst.Module, parents: dict):
        self.module, self.parents = module, parents
        self.top_index = {id(stmt): i for i, stmt in enumerate(module.body)}
        self.starts = [1 + len(module.header)]  # first line of each top-level statement, as far as known
        self._provider = None

    def start(self, node) -> tuple[int, int]:
        top = node
        while id(top) not in self.top_index:
            top = self.parents.get(top)
            if top is None:
                return self._public(node)
        index = self.top_index[id(top)]
        while len(self.starts) <= index:
            self.starts.append(self.starts[-1] + _newlines(self.module.code_for_node(self.module.body[len(self.starts) - 1])))
        if CodegenState is None:  # pragma: no cover
            return self._public(node)
        try:
            top._codegen(_Finder(self.module, self.starts[index], node))
        except _Found as found:
            if found.args[0] is not None:
                return found.args[0]
        return self._public(node)

    def _public(self, node) -> tuple[int, int]:
        if self._provider is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            self._provider = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        p = self._provider[node].start
        return p.line, p.column
