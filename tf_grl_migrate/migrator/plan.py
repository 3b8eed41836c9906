"""The edit plan: what the rules decided to change in one module, as data. The converting rules
(tf_grl_migrate.migrator.idioms) return their decisions as edits (the values below); the
builder (rewrite.Builder) applies them here, in ``Plan.apply``, the one place a plan is
written; the rewrite (rewrite.Rewriter) carries the plan out, and the safety net reads what it
removes on purpose (``Plan.machinery``). Nothing here edits a node."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from ..report import Diagnostic
from .imports import Imports
from .nodes import bound_name, code_of, def_path
from .safety import Piece, Span
from .traversal import NodeMap


@dataclass
class Plan:
    imports: Imports  # every import the rewrite adds, joins or drops (imports.py)
    op_refs: dict = field(default_factory=dict)  # Subscript -> new name
    renames: dict = field(default_factory=dict)  # Attribute -> new dotted name (removed TF aliases)
    keywords: dict = field(default_factory=dict)  # Arg -> TF2 keyword (tf_upgrade_v2's keyword tables)
    calls: dict = field(default_factory=dict)  # Call -> builder(updated) -> new call
    runtime_calls: dict = field(default_factory=dict)  # Call -> scale expression (--use-runtime)
    removed_defs: set = field(default_factory=set)
    live: dict = field(default_factory=dict)  # id -> node reused elsewhere although its parent is removed
    defs: dict = field(default_factory=dict)  # FunctionDef -> builder(updated) -> new def
    with_items: dict = field(default_factory=dict)  # With -> set of items to remove
    before_with: dict = field(default_factory=dict)  # With -> [generated defs]
    removed_stmts: set = field(default_factory=set)
    replace_stmts: dict = field(default_factory=dict)
    hoisted_ifs: set = field(default_factory=set)
    removed: dict = field(default_factory=dict)  # id -> every original node that disappears
    notes: list = field(default_factory=list)  # what the edit rules could not respell (diagnostics)

    def remove(self, node: cst.CSTNode | None) -> None:
        self.removed[id(node)] = node

    def apply(self, edits: Iterable[Edit]) -> None:
        """Carry the rules' decisions into the plan, in order."""
        for edit in edits:
            edit.apply(self)

    def machinery(self, parents: NodeMap,
                  span: Callable[[cst.CSTNode], Span | None] = lambda node: None) -> tuple[list, list[Piece]]:
        """For the safety net: ((source, enclosing def/class names, names bound again in its place)
        of each statement this plan removes or replaces on purpose, the source of each statement
        inside an override block whose map it removes). ``span``: where the original module has
        a statement, for one the walk recorded (its code is not generated again to be parsed)."""
        def piece(node: cst.CSTNode) -> Piece:
            return span(node) or code_of(node)

        removed = [(piece(n), def_path(n, parents), ())
                   for n in (*self.removed_stmts, *self.removed_defs)]
        removed += [(piece(n), def_path(n, parents), _binds(new)) for n, new in self.replace_stmts.items()]
        removed += [(f"if {code_of(guard.test)}:\n    pass\n", (), ()) for guard in self.hoisted_ifs]  # the body stays
        for node, names in self.imports.dropped.items():
            if isinstance(node.names, cst.ImportStar):
                continue  # binds no name of its own to drop
            removed += [
                (code_of(node.with_changes(names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)])), (), ())
                for alias in node.names
                if bound_name(alias) in names
            ]
        dissolved = [piece(stmt) for with_node in self.with_items for stmt in with_node.body.body]
        return removed, dissolved


# -- the edits a converting rule returns (each says what it does to the plan) ----------------------
class Edit:
    """One decision of a converting rule about the module's code."""

    def apply(self, plan: Plan) -> None:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class Drop(Edit):
    """A node goes (the names only it read may go with it: Builder.remove_dead_code)."""

    node: cst.CSTNode | None

    def apply(self, plan: Plan) -> None:
        plan.remove(self.node)


@dataclass(frozen=True, eq=False)
class DropStatement(Edit):
    """A statement goes on purpose (the safety net expects it gone)."""

    stmt: cst.CSTNode

    def apply(self, plan: Plan) -> None:
        plan.removed_stmts.add(self.stmt)
        plan.remove(self.stmt)


@dataclass(frozen=True, eq=False)
class DropDef(Edit):
    """A function goes on purpose (a registration the runtime replaces)."""

    fdef: cst.FunctionDef

    def apply(self, plan: Plan) -> None:
        plan.removed_defs.add(self.fdef)
        plan.remove(self.fdef)


@dataclass(frozen=True, eq=False)
class DropItem(Edit):
    """A ``with`` item goes (the block's body stays; a with left without items dissolves)."""

    with_node: cst.With
    item: cst.WithItem

    def apply(self, plan: Plan) -> None:
        plan.with_items.setdefault(self.with_node, set()).add(self.item)
        plan.remove(self.item)


@dataclass(frozen=True, eq=False)
class Replace(Edit):
    """A statement becomes another."""

    stmt: cst.CSTNode
    new: cst.CSTNode

    def apply(self, plan: Plan) -> None:
        plan.replace_stmts[self.stmt] = self.new


@dataclass(frozen=True, eq=False)
class Redefine(Edit):
    """A def becomes what ``build`` makes of it (its rewritten self)."""

    fdef: cst.FunctionDef
    build: Callable[[cst.FunctionDef], cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]]

    def apply(self, plan: Plan) -> None:
        plan.defs[self.fdef] = self.build


@dataclass(frozen=True, eq=False)
class Recall(Edit):
    """A call (or an operator) becomes what ``build`` makes of it (its rewritten self)."""

    call: cst.CSTNode
    build: Callable[..., cst.BaseExpression]

    def apply(self, plan: Plan) -> None:
        plan.calls[self.call] = self.build


@dataclass(frozen=True, eq=False)
class RuntimeScale(Edit):
    """A call now reverses through the runtime's flip_gradient with this scale (the DANN re-export reads it)."""

    call: cst.Call
    scale: cst.BaseExpression

    def apply(self, plan: Plan) -> None:
        plan.runtime_calls[self.call] = self.scale


@dataclass(frozen=True, eq=False)
class Rename(Edit):
    """An attribute chain is spelt ``name`` (a TF1 name's TF2 twin, ``op.inputs`` as a list)."""

    node: cst.CSTNode
    name: str

    def apply(self, plan: Plan) -> None:
        plan.renames[self.node] = self.name


@dataclass(frozen=True, eq=False)
class OpRef(Edit):
    """``op.inputs[i]`` / ``op.outputs[i]`` is spelt ``name``, the custom-gradient function's own."""

    node: cst.Subscript
    name: str

    def apply(self, plan: Plan) -> None:
        plan.op_refs[self.node] = self.name


@dataclass(frozen=True, eq=False)
class Keyword(Edit):
    """A keyword argument is spelt ``name``, TF2's (tf_upgrade_v2's keyword tables)."""

    arg: cst.Arg
    name: str

    def apply(self, plan: Plan) -> None:
        plan.keywords[self.arg] = self.name


@dataclass(frozen=True, eq=False)
class Keep(Edit):
    """A node stays bound although its parent goes: the generated code reads it."""

    node: cst.CSTNode

    def apply(self, plan: Plan) -> None:
        plan.live[id(self.node)] = self.node


@dataclass(frozen=True, eq=False)
class Before(Edit):
    """A statement (a generated def) goes just before a ``with`` block."""

    with_node: cst.With
    stmt: cst.CSTNode

    def apply(self, plan: Plan) -> None:
        plan.before_with.setdefault(self.with_node, []).append(self.stmt)


@dataclass(frozen=True, eq=False)
class Hoist(Edit):
    """An ``if`` guard's body takes its place (its test goes)."""

    guard: cst.If

    def apply(self, plan: Plan) -> None:
        plan.hoisted_ifs.add(self.guard)


@dataclass(frozen=True, eq=False)
class Note(Edit):
    """What an edit rule could not respell: a diagnostic of the module."""

    diagnostic: Diagnostic

    def apply(self, plan: Plan) -> None:
        plan.notes.append(self.diagnostic)


def respelled(renames: dict, keywords: dict) -> list[Edit]:
    """A registration's TF1 names and keywords, spelt as TF2 spells them."""
    return [*(Rename(node, name) for node, name in renames.items()),
            *(Keyword(arg, name) for arg, name in keywords.items())]


def _binds(stmt: cst.CSTNode) -> tuple:
    """The name a replacement statement binds in its scope: a def's (a Defun's custom-gradient function)."""
    return (stmt.name.value,) if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else ()


@dataclass
class Conversion:
    """The rewrite's working state for one registration it converts (what was decided about the
    registration is its Registration, which the rewrite only reads)."""

    callable_name: str = ""  # what call sites call after the rewrite
    # the callable (or operator) that creates the overridden op
    forward: cst.BaseExpression | cst.BaseBinaryOp | None = None
    arity: int = 1
    name_keyword: str | None = None  # the `name=` the overridden op was created with (a literal)
