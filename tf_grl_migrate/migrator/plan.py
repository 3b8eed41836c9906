"""The edit plan: what the rules decided to change in one module, as data. The converting rules
(tf_grl_migrate.migrator.idioms) fill it through the builder (rewrite.Builder); the rewrite
(rewrite.Rewriter) applies it, and the safety net reads what it removes on purpose
(``Plan.machinery``). Nothing here edits a node."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .imports import Imports
from .nodes import bound_name, code_of, def_path
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

    def machinery(self, parents: NodeMap) -> tuple[list, list[str]]:
        """For the safety net: ((source, enclosing def/class names, names bound again in its place)
        of each statement this plan removes or replaces on purpose, the source of each statement
        inside an override block whose map it removes)."""
        removed = [(code_of(n), def_path(n, parents), ())
                   for n in (*self.removed_stmts, *self.removed_defs)]
        removed += [(code_of(n), def_path(n, parents), _binds(new)) for n, new in self.replace_stmts.items()]
        removed += [(f"if {code_of(guard.test)}:\n    pass\n", (), ()) for guard in self.hoisted_ifs]  # the body stays
        for node, names in self.imports.dropped.items():
            if isinstance(node.names, cst.ImportStar):
                continue  # binds no name of its own to drop
            removed += [
                (code_of(node.with_changes(names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)])), (), ())
                for alias in node.names
                if bound_name(alias) in names
            ]
        dissolved = [code_of(stmt) for with_node in self.with_items for stmt in with_node.body.body]
        return removed, dissolved


def _binds(stmt: cst.CSTNode) -> tuple:
    """The name a replacement statement binds in its scope: a def's (a Defun's custom-gradient function)."""
    return (stmt.name.value,) if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else ()


@dataclass
class Conversion:
    """The rewrite's working state for one registration it converts (what was decided about the
    registration is its Registration, which the rewrite only reads)."""

    callable_name: str = ""  # what call sites call after the rewrite
    forward: cst.BaseExpression | None = None  # the callable (or operator) that creates the overridden op
    arity: int = 1
    name_keyword: str | None = None  # the `name=` the overridden op was created with (a literal)
