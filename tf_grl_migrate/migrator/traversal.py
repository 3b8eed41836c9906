"""Reading libcst trees through libcst's public API, faster than its own walk, with the same
answers (each checked against libcst's own in tests/test_engine.py): visitors that find their
hooks once per node type and walk without rebuilding nodes, maps keyed by node identity, and the
positions of the few nodes a diagnostic names. Nothing of libcst is replaced; its codegen protocol is
served (Positions), as its own position provider serves it."""

from __future__ import annotations

import abc
import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Callable, NamedTuple

import libcst as cst
from libcst.metadata import PositionProvider


def _is_stub(hook: object, name: str) -> bool:
    """Whether ``hook`` is libcst's own do-nothing ``visit_*`` / ``leave_*`` (inherited, not overridden)."""
    return any(getattr(base, name, None) is hook for base in (cst.CSTVisitor, cst.CSTTransformer))


class NodeMap:
    """A mapping keyed by node identity: a libcst node hashes in Python (its ``__hash__`` is a
    Python method), and a walk stores an entry or two for every node, so these dicts are keyed
    by ``id(node)``; the tree they describe holds every node alive meanwhile."""

    __slots__ = ("by_id",)

    def __init__(self, by_id: dict[int, Any] | None = None) -> None:
        self.by_id = {} if by_id is None else by_id

    def get(self, node: object, default: Any = None) -> Any:  # node may be None: then the default
        return self.by_id.get(id(node), default)

    def __getitem__(self, node: cst.CSTNode) -> Any:
        return self.by_id[id(node)]


class Quick:
    """A mixin placed first on a libcst visitor: libcst looks up ``visit_<Node>_<field>`` and
    ``leave_<Node>_<field>`` by name for every field of every node it walks, and calls libcst's
    no-op stub for each. The class's real such methods are listed once, and only those are called
    (a fifth of a walk saved; the same work done)."""

    _attribute_hooks: frozenset = frozenset()
    _hooked_types: frozenset = frozenset()  # the node types named in those hooks

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._find_attribute_hooks()

    @classmethod
    def _find_attribute_hooks(cls) -> None:
        hooks = frozenset(  # not libcst's typed stubs for every (node, field)
            tuple(name.split("_", 2)) for name in dir(cls)
            if name.startswith(("visit_", "leave_")) and name.count("_") >= 2 and name.split("_", 2)[1][:1].isupper()
            and not _is_stub(getattr(cls, name), name))
        type.__setattr__(cls, "_attribute_hooks", hooks)
        type.__setattr__(cls, "_hooked_types", frozenset(node for _, node, _ in hooks))

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if self._attribute_hooks and ("visit", type(node).__name__, attribute) in self._attribute_hooks:
            getattr(self, f"visit_{type(node).__name__}_{attribute}")(node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if self._attribute_hooks and ("leave", type(original_node).__name__, attribute) in self._attribute_hooks:
            getattr(self, f"leave_{type(original_node).__name__}_{attribute}")(original_node)


_HOOK_NAMES = ("visit_", "leave_", "on_visit", "on_leave")  # a node type's hooks, and the visitor's own


class _Hooks(abc.ABCMeta):  # libcst's visitors' own metaclass
    """A hook set on (or deleted from) a visitor class later, as a test patching ``visit_Yield``
    or ``on_visit`` does, drops what was found of the hooks of that class and its subclasses
    (field hooks are found again)."""

    def __setattr__(cls, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name.startswith(_HOOK_NAMES):
            cls._forget()

    def __delattr__(cls, name: str) -> None:
        super().__delattr__(name)
        if name.startswith(_HOOK_NAMES):
            cls._forget()

    def _forget(cls) -> None:
        stack: list[Any] = [cls]
        while stack:
            klass = stack.pop()
            if "_visits" in klass.__dict__:
                klass._visits.clear()
                klass._leaves.clear()
                type.__setattr__(klass, "_sees_layout", None)
                type.__setattr__(klass, "_replays", None)
                klass._find_attribute_hooks()
            stack.extend(klass.__subclasses__())


class QuickVisitor(Quick, cst.CSTVisitor, metaclass=_Hooks):
    """A read-only visitor that also finds its ``visit_<Node>`` / ``leave_<Node>`` once per node
    type: libcst formats the name and looks it up for every node, and calls its typed no-op stub
    for every type the visitor does not handle. Walked with ``walk`` (or ``record_walk``), never
    through libcst's ``node.visit``."""

    _visits: _HookTable  # node type -> its visit_ hook (None: none), per class
    _leaves: _HookTable
    _sees_layout: bool | None = None  # whether a hook may see layout (TRIVIA), found at the first walk
    _replays: bool | None = None  # whether ``read`` may replay the planner's record, found at the first read

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        type.__setattr__(cls, "_visits", _HookTable(cls, "visit_"))
        type.__setattr__(cls, "_leaves", _HookTable(cls, "leave_"))
        type.__setattr__(cls, "_sees_layout", None)

    def on_visit(self, node: cst.CSTNode) -> bool:
        hook = self._visits[type(node)]
        return hook is None or hook(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        hook = self._leaves[type(original_node)]
        if hook is not None:
            hook(self, original_node)

    def walk(self, node: cst.CSTNode) -> None:
        """``node.visit(self)``, without what libcst's walk does for a transformer: it builds a new
        copy of every node it leaves (validating each) even for a visitor, which drops them. The
        children are read field by field in libcst's own order (recorded once per node type)."""
        layout = type(self)._sees_layout
        if layout is None:
            layout = _hooks_layout(type(self))
            type.__setattr__(type(self), "_sees_layout", layout)
        _walk(self, node, self._hooked_types, layout)

    def read(self, node: cst.CSTNode, walked: Recorded | None) -> None:
        """``walk(node)`` from the planner's record of it (``walked``: its subtree, as
        ``Collector.subtree`` gives it; None: walked) for a visitor whose only hooks are
        ``visit_<Node>`` ones on nodes that are not layout: each called on the recorded nodes in
        their order, a hook that returns False skipping the node's subtree, as the walk does."""
        cls = type(self)
        replays = cls.__dict__.get("_replays")
        if replays is None:
            replays = not (_hooks_layout(cls) or cls._attribute_hooks or any(
                not _is_stub(getattr(cls, name), name) for name in dir(cls) if name.startswith("leave_")))
            type.__setattr__(cls, "_replays", replays)
        if walked is None or not replays:
            self.walk(node)
            return
        visits, nodes, ends, i = self._visits, walked.nodes, walked.ends, walked.start
        while i < walked.end:
            hook = visits[nodes[i].__class__]
            if hook is not None and hook(self, nodes[i]) is False:
                i = ends[i]
            else:
                i += 1


def _hooks_layout(cls: type[QuickVisitor]) -> bool:
    """Whether a hook of ``cls`` may be called on layout (TRIVIA): one named for a layout type, a
    field hook of one, or its own ``on_visit``/``on_leave``. If none, its walks leave layout out."""
    layout = {kind.__name__ for kind in TRIVIA}
    own = (cls.on_visit is not QuickVisitor.on_visit or cls.on_leave is not QuickVisitor.on_leave
           or cls.on_visit_attribute is not Quick.on_visit_attribute
           or cls.on_leave_attribute is not Quick.on_leave_attribute)
    return own or bool(layout & cls._hooked_types) or any(
        name.split("_", 1)[1] in layout and not _is_stub(getattr(cls, name), name)
        for name in dir(cls) if name.startswith(("visit_", "leave_")))


def _order_of(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields libcst visits on ``node``, in its order (learnt once per type and presence)."""
    known = _FIELDS.get(node.__class__)
    if known is not None:
        fields = known[1].get(known[2](node) if known[0] else ())
        if fields is not None:
            return fields
    return _fields(node)


class Recorded(NamedTuple):
    """A subtree as ``record_walk`` recorded it: ``nodes[start:end]``, each node i's own subtree
    ending at ``ends[i]``."""

    nodes: Sequence[cst.CSTNode]
    ends: Sequence[int]
    start: int
    end: int


def record_walk(visitor: QuickVisitor, root: cst.CSTNode, order: dict[int, int], nodes: list[cst.CSTNode],
                lines: list[int], parents: dict[int, cst.CSTNode], enter: Callable[[cst.CSTNode], object],
                leave: Callable[[cst.CSTNode], object], late: dict[type, tuple[str, ...]], ends: list[int],
                closes: list[int]) -> None:
    """QuickVisitor's walk for a visitor that records every node it meets but layout (``TRIVIA``:
    whitespace, comments, punctuation, operators, which hold nothing else): its pre-order index
    (``order``, by id, and ``nodes``), the line breaks written before it (``lines``: what
    ``Positions`` counts a statement's line from), where its subtree ends (``ends``: the index
    after its last descendant, so ``nodes[i:ends[i]]`` is node i's subtree), the line breaks
    written up to the end of its text (``closes``: a statement's text is the lines from
    ``lines[i]`` to ``closes[i]``), its parent (``parents``, by id), and ``enter(node)`` before
    its hook and ``leave(node)`` after its children; the fields ``late`` names for a type are read
    after its others. No field hooks: for a visitor that has none.
    Layout is more than half of a module's nodes; only its line breaks are counted."""
    cls = type(visitor)
    visits, leaves = cls._visits, cls._leaves
    count = 0  # line breaks written so far, in pre-order

    def visit(node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        nonlocal count
        nid = id(node)
        index = order[nid] = len(nodes)
        nodes.append(node)
        lines.append(count)
        ends.append(0)
        closes.append(0)
        if node.__class__ in _TEXTS:
            count += _newlines(node.value)  # a string's text
        if parent is not None:
            parents[nid] = parent
        enter(node)
        kind = type(node)
        hook = visits[kind]
        if hook is None or hook(visitor, node) is not False:
            fields = _order_of(node)
            if kind in late:
                fields = _read_last(fields, late[kind])
            for field in fields:
                value = getattr(node, field)
                if isinstance(value, (tuple, list)):
                    for child in value:
                        if child.__class__ in TRIVIA:
                            count += _layout_newlines(child)
                        else:
                            visit(child, node)
                elif value is not None and value.__class__ is not cst.MaybeSentinel:
                    if value.__class__ not in TRIVIA:
                        visit(value, node)
                    elif value.__class__ is not cst.SimpleWhitespace or "\\" in value.value:  # the most common
                        count += _layout_newlines(value)  # layout, a space, writes none: no call
        ends[index] = len(nodes)
        closes[index] = count
        leave(node)
        hook = leaves[kind]
        if hook is not None:
            hook(visitor, node)

    visit(root, None)


def transform(node: cst.CSTNode, transformer: cst.CSTTransformer, path: set[int] | frozenset[int]) -> Any:
    """``node.visit(transformer)`` for a transformer that changes only the nodes whose ids are in
    ``path`` (its hooks hand every other node back as it is), without libcst's visit of every
    child of a path node and its copy of each path node before the hook. Only path nodes are walked
    (``node`` is one), in libcst's order, each left through ``transformer.on_leave(original,
    updated)``; ``updated`` is ``original`` with the children the walk changed put in (libcst's
    own sequence rules: a ``FlattenSentinel`` spliced in, a ``RemovalSentinel`` dropped), or
    ``original`` itself where none changed."""
    changes = {}
    for field in _order_of(node):
        value = getattr(node, field)
        if isinstance(value, (tuple, list)):
            if not path.isdisjoint(map(id, value)):
                children: list[cst.CSTNode] = []
                for child in value:
                    if id(child) not in path:
                        children.append(child)
                        continue
                    result = transform(child, transformer, path)
                    if isinstance(result, cst.FlattenSentinel):
                        children.extend(result.nodes)
                    elif not isinstance(result, cst.RemovalSentinel):
                        children.append(result)
                changes[field] = tuple(children)
        elif id(value) in path:
            result = transform(value, transformer, path)
            if isinstance(result, (cst.FlattenSentinel, cst.RemovalSentinel)):  # libcst's visit_required
                raise TypeError(f"{type(node).__name__}.{field} cannot be removed or flattened")
            changes[field] = result
    return transformer.on_leave(node, node.with_changes(**changes) if changes else node)


def _read_last(fields: tuple[str, ...], last: tuple[str, ...]) -> tuple[str, ...]:
    """``fields`` with those in ``last`` moved to the end."""
    return (*(f for f in fields if f not in last), *(f for f in fields if f in last))


def _walk(visitor: QuickVisitor, node: cst.CSTNode, hooked: frozenset[str], layout: bool) -> None:
    """``layout``: whether layout (TRIVIA) is walked too; for a visitor none of whose hooks can
    see it, it is not (more than half of a module's nodes, holding nothing else)."""
    if visitor.on_visit(node):
        attributes = hooked and type(node).__name__ in hooked
        for field in _order_of(node):
            if attributes:
                visitor.on_visit_attribute(node, field)
            value = getattr(node, field)
            if isinstance(value, (tuple, list)):
                for child in value:
                    if layout or child.__class__ not in TRIVIA:
                        _walk(visitor, child, hooked, layout)
            elif value is not None and value.__class__ is not cst.MaybeSentinel and (
                    layout or value.__class__ not in TRIVIA):
                _walk(visitor, value, hooked, layout)
            if attributes:
                visitor.on_leave_attribute(node, field)
    visitor.on_leave(node)


# node type -> (fields whose presence picks the order, {presence: fields in order}, presence of node)
_FIELDS: dict[type, tuple] = {}


def _has(value: object) -> bool:
    """Whether a field holds a child node: not None, no MaybeSentinel, no empty sequence."""
    if value is None or value.__class__ is cst.MaybeSentinel:
        return False
    return bool(value) if isinstance(value, (tuple, list)) else True


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields libcst visits on ``node``, in its order: read from the node's public
    ``children`` (libcst's own visit order), each child found in the field holding it. A field
    with no child (None, a sentinel, an empty sequence) has no place in that order, so the order
    is kept per type and per presence of the fields seen without one (each such field joins the
    key); a field that holds no node at all is a ``str``, never visited."""
    owner = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, (tuple, list)):
            for child in value:
                owner[id(child)] = f.name
        elif isinstance(value, cst.CSTNode):
            owner[id(value)] = f.name
    order: list[str] = []
    for child in node.children:
        name = owner[id(child)]
        if not order or order[-1] != name:
            order.append(name)
    fields = tuple(order)
    absent = {f.name for f in dataclasses.fields(node) if f.name not in fields and not _has(getattr(node, f.name))}
    keys, orders, presence = _FIELDS.get(type(node), ((), {}, _no_presence))
    if not absent <= set(keys):
        keys, orders = tuple(sorted(absent.union(keys))), {}
        presence = _presence(keys)
    orders[presence(node)] = fields
    _FIELDS[type(node)] = (keys, orders, presence)
    return fields


def _no_presence(node: cst.CSTNode) -> tuple:
    return ()


def _presence(keys: tuple[str, ...]) -> Callable[[cst.CSTNode], tuple]:
    """A function of a node: for each field in ``keys``, whether it holds a child node (``_has``;
    a node is always true, as no libcst node has a length), in one call: run for most nodes of
    every walk, where a loop over ``_has`` cost a tenth of the walk. ``keys`` are field names."""
    assert all(key.isidentifier() for key in keys)
    parts = "".join(f"(n.{key}.__class__ is not M and bool(n.{key})), " for key in keys)
    return eval(f"lambda n: ({parts})", {"M": cst.MaybeSentinel})  # field names, checked


class _HookTable(dict):
    """A visitor class's hooks of one kind (``visit_`` or ``leave_``) by node type, each looked up
    the first time a walk meets the type; None where the class has none but libcst's stub."""

    def __init__(self, cls: type, prefix: str) -> None:
        super().__init__()
        self.cls, self.prefix = cls, prefix

    def __missing__(self, kind: type) -> Callable[..., Any] | None:
        name = self.prefix + kind.__name__
        hook = getattr(self.cls, name, None)
        hook = self[kind] = None if hook is None or _is_stub(hook, name) else hook
        return hook


LINE_BREAK = re.compile(r"\r\n?|\n")  # a line break, as libcst writes and reads them


def _newlines(text: str) -> int:
    """The LINE_BREAKs in ``text``, counted."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


# the nodes that are layout: they hold nothing but layout, and no name, expression or statement
TRIVIA = frozenset(
    kind for kind in (getattr(cst, name) for name in cst.__all__)
    if isinstance(kind, type) and issubclass(kind, cst.CSTNode) and (
        issubclass(kind, (cst.BaseParenthesizableWhitespace, cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp,
                          cst.BaseUnaryOp, cst.BaseAugOp))
        or kind in (cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment, cst.Comma, cst.Dot, cst.Colon,
                    cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
                    cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.ImportStar,
                    cst.Asynchronous)))

# the nodes whose text (``value``) may hold a line break: a string (a line continuation's is layout's)
_TEXTS = frozenset({cst.SimpleString, cst.FormattedStringText,
                    getattr(cst, "TemplatedStringText", cst.FormattedStringText)})  # libcst >= 1.8: t-strings


def _layout_newlines(node: cst.CSTNode) -> int:
    """The line breaks a layout node writes: a ``Newline`` one, whatever its value; whitespace
    those of its text (a line continuation); the others those their parts write."""
    kind = node.__class__
    if kind is cst.SimpleWhitespace:
        text = node.value  # type: ignore[attr-defined]
        return _newlines(text) if "\\" in text else 0
    if kind is cst.Newline:
        return 1
    fields = _LAYOUT_FIELDS.get(kind)
    if fields is None:
        fields = _LAYOUT_FIELDS[kind] = tuple(f.name for f in dataclasses.fields(node))
    count = 0
    for field in fields:  # in any order: only the sum is wanted
        value = getattr(node, field)
        if isinstance(value, (tuple, list)):
            for child in value:
                count += _layout_newlines(child)
        else:
            cls = value.__class__
            is_node = _IS_NODE.get(cls)
            if is_node is None:
                is_node = _IS_NODE[cls] = issubclass(cls, cst.CSTNode)
            if is_node:
                count += _layout_newlines(value)
    return count


_LAYOUT_FIELDS: dict[type, tuple[str, ...]] = {}  # a layout type -> its fields
# a field's class -> whether it is a node: CSTNode is an ABC, whose isinstance costs a Python call
_IS_NODE: dict[type, bool] = {}


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children``, in libcst's order, from the field order learnt once per type."""
    out: list = []
    for field in _order_of(node):
        value = getattr(node, field)
        if isinstance(value, (tuple, list)):
            out.extend(value)
        elif _has(value):
            out.append(value)
    return out


def _positions(module: cst.Module) -> Mapping[cst.CSTNode, Any]:
    """``PositionProvider``'s answer for every node of ``module``, from the provider's own pass
    (one generation of the code). ``MetadataWrapper.resolve`` would first walk the whole module
    once more, for batchable providers, even where none is asked for: as long again as the pass
    itself. So the provider is run as the wrapper runs it: its ``_gen_impl`` (what a provider
    implements) fills its ``_computed`` (what the wrapper reads), the two names of libcst's
    provider protocol this package uses."""
    provider = PositionProvider()
    provider._gen_impl(module)
    return provider._computed


class _Reached(Exception):
    """The wanted node's start is met: ``at`` tokens of code come before it."""

    def __init__(self, at: int) -> None:
        super().__init__(at)
        self.at = at


class _Unrecorded:
    """What ``record_syntactic_position`` returns for a node the locator does not look for."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_UNRECORDED = _Unrecorded()


class Writer:
    """A codegen state: what libcst's nodes write their code through (``node._codegen(state)``,
    the protocol libcst's own state and PositionProvider's implement), keeping the tokens. Its
    ``record_syntactic_position`` hands back one do-nothing context, where libcst's makes a
    generator context for every node: a third of the cost of generating a statement's code."""

    provider = None

    def __init__(self, default_indent: str, default_newline: str, indents: list[str]) -> None:
        self.default_indent, self.default_newline = default_indent, default_newline
        self.indent_tokens = indents
        self.tokens: list[str] = []

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)

    def decrease_indent(self) -> None:
        self.indent_tokens.pop()

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        pass

    def after_codegen(self, node: cst.CSTNode) -> None:
        pass

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> _Unrecorded:
        return _UNRECORDED


def written_tokens(node: cst.CSTNode, default_indent: str, default_newline: str, indents: list) -> list | None:
    """The tokens of ``node``'s code, written through a ``Writer`` in blocks indented by ``indents``;
    None where this libcst's nodes ask the state for more than the protocol ``Writer`` serves (or
    refuse the node: libcst's own state says why)."""
    state = Writer(default_indent, default_newline, indents)
    try:
        node._codegen(state)  # type: ignore[arg-type]  # the codegen protocol, duck-typed
    except Exception:  # noqa: BLE001 - a protocol this libcst does not keep (or a node libcst refuses too)
        return None
    return state.tokens


def code_for(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``, through ``Writer`` (``written_tokens``); through libcst's own
    state where that cannot write it."""
    tokens = written_tokens(node, module.default_indent, module.default_newline, [])
    return module.code_for_node(node) if tokens is None else "".join(tokens)


class _Locator(Writer):
    """A ``Writer`` that stops at one node's start where PositionProvider records it: on entering
    its syntactic position (or, for a block, its first statement's), or before its code for a
    node that records none. Nothing after the node is generated, and no position is computed for
    any other node."""

    def __init__(self, default_indent: str, default_newline: str, indents: list[str], wanted: cst.CSTNode) -> None:
        super().__init__(default_indent, default_newline, indents)
        self.wanted, self._before = wanted, 0

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node is self.wanted:
            self._before = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node is self.wanted:  # it recorded no syntactic position: where its code began
            raise _Reached(self._before)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> _Unrecorded:
        if node is self.wanted:
            if start_node is None:
                raise _Reached(len(self.tokens))
            self.wanted = start_node  # a block starts where its first statement does
        return _UNRECORDED


def indent_of(statement: cst.CSTNode, parents: NodeMap, default_indent: str) -> str:
    """The indent the module writes ``statement`` at: its blocks' own, outermost first."""
    parts = []
    node = parents.get(statement)
    while node is not None:
        if isinstance(node, cst.IndentedBlock):
            parts.append(default_indent if node.indent is None else node.indent)
        node = parents.get(node)
    return "".join(reversed(parts))


class Positions:
    """Where a node starts (line, 1-based; column, 0-based), as ``PositionProvider`` says, without
    its pass over the whole module (it records a range for every node, generating all the code:
    about a parse's cost, where a diagnostic needs the positions of a few nodes).

    The line where the innermost statement holding the node starts is counted from the walk's
    record: the line breaks written before it in pre-order (``breaks_before``), which meets
    every token whose code comes before the statement's. That statement's code is then generated
    at its blocks' indentation up to the node (``_Locator``), and the rest of the line and the
    column counted from it. A node the walk did not record (layout), or a libcst whose nodes
    write through more than the locator knows, is placed by the provider's pass over the whole
    module."""

    def __init__(self, module: cst.Module, parents: NodeMap, breaks_before: Callable[[cst.CSTNode], int]) -> None:
        self.module, self.parents, self._breaks_before = module, parents, breaks_before
        self._provider: Any = None  # PositionProvider's answers, when a statement could not be placed alone

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        chain = [node]  # node, its parent, ... up to the module
        while chain[-1] is not self.module:
            parent = self.parents.get(chain[-1])
            if parent is None:
                return self._public(node)
            chain.append(parent)
        # the innermost statement of a block (not an `elif`, which its `if` generates)
        at = next((i for i, n in enumerate(chain[:-1]) if isinstance(n, cst.BaseStatement)
                   and isinstance(chain[i + 1], (cst.IndentedBlock, cst.Module))), None)
        if at is None:
            return self._public(node)
        statement = chain[at]
        indent = indent_of(statement, self.parents, self.module.default_indent)
        state = _Locator(self.module.default_indent, self.module.default_newline, [indent], node)
        try:
            statement._codegen(state)  # type: ignore[arg-type]  # the codegen protocol, duck-typed
        except _Reached as reached:
            before = LINE_BREAK.split("".join(state.tokens[:reached.at]))  # as PositionProvider counts
            return 1 + self._breaks_before(statement) + len(before) - 1, len(before[-1])
        except Exception:  # noqa: BLE001 - a protocol this libcst does not keep: the provider's answer
            pass
        return self._public(node)

    def _public(self, node: cst.CSTNode) -> tuple[int, int]:
        if self._provider is None:
            self._provider = _positions(self.module)
        p = self._provider[node].start
        return p.line, p.column


