"""What the analysis records about a module: its gradient registrations, the override blocks
(sites) and what each maps, and targets chosen by a name. Plain records; the analysis fills them
(analysis.py, idioms/registered_gradient.py) and the rewrite reads them (rewrite.py, idioms/)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..knowledge import ops
from . import facts
from .nodes import string_value
from .verdicts import Refusal


@dataclass(eq=False)
class Registration:
    name_key: tuple | None  # None: a name no key identifies (facts.key), which no use matches
    fdef: cst.FunctionDef | None  # the gradient function (op, grad); None: not found (refused)
    kind: str  # "decorator" | "call" | "factory"
    name_expr: cst.BaseExpression  # the name it registers, as written
    decorator: cst.Decorator | None = None
    stmt: cst.SimpleStatementLine | None = None  # call/factory form statement
    factory_call: cst.Call | None = None
    refusal: Refusal | None = None  # when it cannot be converted
    op_refs: dict = field(default_factory=dict)  # original Subscript node -> ("in"|"out", index)
    uses_output: bool = False
    body_names: set = field(default_factory=set)
    rename: bool = False  # its def name is bound twice in its scope: the converted function gets a fresh one
    owner: str = ""  # registered in the body of a plain module-level class bound once: the class calls go through
    # used for several op types, with `name=` values that differ or are not literals, or chosen by a
    # name (Dispatch): converted to a maker, `fn(forward, name=...)` returning the custom-gradient function
    maker: bool = False
    dropped: list = field(default_factory=list)  # `del op` lines: no op in the converted function
    maker_name: bool = False  # the maker takes `name=` (some use passes one)
    export: facts.Export | None = None  # used from other modules of the run

    @property
    def function(self) -> cst.FunctionDef:
        """The gradient function, for a registration whose function was found (any other is
        refused when it is found, so nothing past that asks)."""
        if self.fdef is None:
            raise ValueError("a registration whose gradient function was not found")
        return self.fdef


@dataclass(eq=False)
class Dispatch:
    """An override target held in a name that can only hold these literals (``gradient = {...}[g]``),
    each a registration: the migrated call picks the converted function by the same value."""
    expr: cst.BaseExpression
    choices: dict  # value -> Registration, in the order the values appear
    spelling: dict  # value -> its literal as the source wrote it


def is_string_literal(expr: cst.CSTNode | None) -> bool:
    return string_value(expr) is not None


def regs_of(target: object) -> list:
    """The registrations of this module an override target uses (none for a gradient TensorFlow
    provides or one registered in another module)."""
    if isinstance(target, Dispatch):
        return list(target.choices.values())
    return [] if isinstance(target, (ops.BuiltinGradient, facts.External)) else [target]


@dataclass(eq=False)
class Site:
    with_node: cst.With
    item: cst.WithItem
    entries: list = field(default_factory=list)  # (OpType, Registration | ops.BuiltinGradient)
    calls: list = field(default_factory=list)  # (Call, OpType)
    refusal: Refusal | None = None
    phantoms: list = field(default_factory=list)  # map keys that cannot be an op type: TF1 applied nothing
    unmade: list = field(default_factory=list)  # map keys, op types the tool cannot wrap, the block never makes

    @property
    def map_call(self) -> cst.Call:
        """The block's ``<receiver>.gradient_override_map(...)`` (a site is made only for one)."""
        return cst.ensure_type(self.item.item, cst.Call)
