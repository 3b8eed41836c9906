"""The rule contract: the hooks an idiom may define, each with its parameters and what it returns,
and the registry its rules are declared into with ``@rule(hook)``. A hook not named here, or a
rule whose parameters are not the hook's, fails at import; the order in which the idioms' rules
run is ``idioms.ORDER``, checked against what is declared.

Deciding (the planner runs these; ``facts`` is what it knows of the module, read-only: ``Facts``):

- ``gather(facts) -> Gathered``: the records the idiom decides about (registrations, override
  blocks), and the diagnostics found on the way;
- ``check_site(facts, site) -> Checked``: a block's verdict, and what the checks found on the
  way (its entries, calls, phantom keys), which the planner records on the site;
- ``settle(facts) -> Settled``: verdicts that spread between records, and the shapes uses ask of a
  registration (a maker), run until nothing changes;
- ``finish(facts) -> list[Diagnostic]``: what is said once every record is decided;
- ``--use-runtime``'s takeovers of blocks the inline rewrite refuses: ``take(facts) -> Taken``,
  ``calls(taken) -> list`` (the map calls moved), ``emit_all(builder, taken) -> list[Edit]``, and for a
  refused block ``hint(facts, call, site) -> Hint | None`` (without ``--use-runtime``: that it
  would take it) and ``why_not(facts, call, site) -> str | None`` (under it: why not).

Converting (the rewrite runs these; ``builder`` answers what the plan so far says, ``Converting``;
each returns its edits, ``plan.Edit`` values, which the builder applies in ``Plan.apply``):

- ``convert_call(builder, site, call, op, target) -> Converted | None``: the name an op call now
  calls, and the edits that define it;
- ``convert_registration(builder, reg, calls) -> list[Edit] | None``: the registration
  converted (None: not this rule's to convert);
- ``rewrite_module(module, plan) -> Module | None``: the module replaced whole;
- ``edit_module(builder) -> list[Edit]``: edits beyond the sites, and notes (``plan.Note``);
- ``convert_own(builder, records) -> list[Edit]``: the idiom's own records (``Gathered.own``)
  no verdict refused.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple, Protocol, TypeVar, overload

if TYPE_CHECKING:  # types only: the rules' modules import what they use themselves
    import libcst as cst

    from ...knowledge.ops import BuiltinGradient, OpType
    from ...report import Diagnostic
    from ..facts import External, Links
    from ..imports import Imports
    from ..plan import Conversion, Edit, Plan
    from ..scopes import BaseAssignment, Scope
    from ..sites import Dispatch, Registration, Site
    from ..traversal import Recorded
    from ..verdicts import Hint, Refusal


T = TypeVar("T")
NodeT = TypeVar("NodeT", bound="cst.CSTNode")
Key = tuple  # what identifies a gradient name expression: ("str", value), ("var", ...), ("expr", ...)


class Hook(NamedTuple):
    name: str
    params: tuple


HOOKS = {hook.name: hook for hook in (
    Hook("gather", ("facts",)),
    Hook("check_site", ("facts", "site")),
    Hook("settle", ("facts",)),
    Hook("finish", ("facts",)),
    Hook("take", ("facts",)),
    Hook("calls", ("taken",)),
    Hook("emit_all", ("builder", "taken")),
    Hook("hint", ("facts", "call", "site")),
    Hook("why_not", ("facts", "call", "site")),
    Hook("convert_call", ("builder", "site", "call", "op", "target")),
    Hook("convert_registration", ("builder", "reg", "calls")),
    Hook("rewrite_module", ("module", "plan")),
    Hook("edit_module", ("builder",)),
    Hook("convert_own", ("builder", "records")),
)}
RUNTIME_HOOKS = ("take", "calls", "emit_all", "hint", "why_not")  # one idiom declares all five, or none

REGISTRY: dict = {}  # hook -> {idiom name: the rule}


@overload
def rule(hook: Literal["gather"]) -> Callable[[GatherRule], GatherRule]: ...
@overload
def rule(hook: Literal["check_site"]) -> Callable[[CheckSiteRule], CheckSiteRule]: ...
@overload
def rule(hook: Literal["settle"]) -> Callable[[SettleRule], SettleRule]: ...
@overload
def rule(hook: Literal["finish"]) -> Callable[[FinishRule], FinishRule]: ...
@overload
def rule(hook: Literal["take"]) -> Callable[[TakeRule], TakeRule]: ...
@overload
def rule(hook: Literal["calls"]) -> Callable[[CallsRule], CallsRule]: ...
@overload
def rule(hook: Literal["emit_all"]) -> Callable[[EmitAllRule], EmitAllRule]: ...
@overload
def rule(hook: Literal["hint"]) -> Callable[[HintRule], HintRule]: ...
@overload
def rule(hook: Literal["why_not"]) -> Callable[[WhyNotRule], WhyNotRule]: ...
@overload
def rule(hook: Literal["convert_call"]) -> Callable[[ConvertCallRule], ConvertCallRule]: ...
@overload
def rule(hook: Literal["convert_registration"]) -> Callable[[ConvertRegistrationRule], ConvertRegistrationRule]: ...
@overload
def rule(hook: Literal["rewrite_module"]) -> Callable[[RewriteModuleRule], RewriteModuleRule]: ...
@overload
def rule(hook: Literal["edit_module"]) -> Callable[[EditModuleRule], EditModuleRule]: ...
@overload
def rule(hook: Literal["convert_own"]) -> Callable[[ConvertOwnRule], ConvertOwnRule]: ...
def rule(hook: str) -> Callable[[AnyRule], AnyRule]:
    """Declare the decorated function as its idiom's rule for ``hook``."""
    spec = HOOKS.get(hook)
    if spec is None:
        raise TypeError(f"@rule({hook!r}): no such hook; the hooks are {', '.join(sorted(HOOKS))}")

    def declare(function: AnyRule) -> AnyRule:
        params = tuple(inspect.signature(function).parameters)
        if params != spec.params:
            raise TypeError(f"{function.__module__}.{function.__name__}: a {hook} rule takes "
                            f"({', '.join(spec.params)}), not ({', '.join(params)})")
        idiom = function.__module__.rsplit(".", 1)[-1]
        declared = REGISTRY.setdefault(hook, {})
        if idiom in declared and declared[idiom] is not function:
            raise TypeError(f"idiom {idiom} declares two {hook} rules")
        declared[idiom] = function
        return function

    return declare


@dataclass
class Gathered:
    """What a gather rule found: new records, the refusals of those it refuses already, as
    (record, Refusal) pairs, and diagnostics."""

    registrations: list = field(default_factory=list)
    sites: list = field(default_factory=list)
    loose_calls: list = field(default_factory=list)  # map calls entered by hand, if at all
    own: list = field(default_factory=list)  # records of the idiom's own kind (facts.own(idiom)): .refusal, .runs()
    verdicts: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)


@dataclass(frozen=True)
class Checked:
    """What a check_site rule decided of a block: its refusal (None: it migrates), and what the
    checks found up to there, which the planner records on the site (``Site.entries``,
    ``Site.calls``, ``Site.phantoms``, ``Site.unmade``): the map's (OpType, target) entries, the
    calls and operators that make a mapped op, the keys that cannot be an op type, the keys that
    are op types the tool cannot wrap and the block makes none of."""

    refusal: Refusal | None
    entries: tuple = ()
    calls: tuple = ()
    phantoms: tuple = ()
    unmade: tuple = ()  # keys that are op types the tool cannot wrap, of which the block makes none


@dataclass
class Settled:
    """What a settle rule decided this round, which the planner records: ``verdicts``, (record,
    Refusal) pairs it gives each record without one; ``makers``, registrations converted to a
    maker of custom-gradient functions (``Registration.maker``); ``named``, makers that pass each
    use's ``name=`` on (``Registration.maker_name``). Nothing decided: the settling is done."""

    verdicts: list = field(default_factory=list)
    makers: list = field(default_factory=list)
    named: list = field(default_factory=list)


@dataclass
class Taken:
    """What a runtime rule takes: the blocks or calls it moves (its own records), and the
    registrations those may name, kept as they are (the planner refuses them for the inline
    rewrite with ``keep``)."""

    taken: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    keep: Any = None  # the Refusal the kept registrations get


@dataclass(frozen=True)
class Converted:
    """What a convert_call rule made of a call: the name the call now calls, and the edits that
    define it (empty when an earlier call's definition serves)."""

    name: str
    edits: tuple = ()


class Facts(Protocol):
    """What a rule may read of the module (analysis.RuleFacts answers; rules never write it):
    the records so far and what the planner's one walk found, as tuples and read-only maps.
    Every member is typed: mypy checks a rule's reads against it (analysis.Planner.facts is
    declared as this protocol, so RuleFacts must answer each member as typed here)."""

    @property
    def module(self) -> cst.Module: ...
    @property
    def source(self) -> str: ...
    @property
    def use_runtime(self) -> bool: ...
    @property
    def links(self) -> Links: ...
    @property
    def registrations(self) -> tuple[Registration, ...]: ...
    @property
    def sites(self) -> tuple[Site, ...]: ...
    @property
    def loose_calls(self) -> tuple[cst.Call, ...]: ...
    @property
    def moved(self) -> frozenset[cst.Call]: ...
    @property
    def withs(self) -> tuple[tuple[cst.With, cst.WithItem], ...]: ...
    @property
    def map_calls(self) -> tuple[cst.Call, ...]: ...
    @property
    def name_withs(self) -> tuple[tuple[cst.With, cst.WithItem], ...]: ...
    @property
    def name_calls(self) -> tuple[cst.Call, ...]: ...
    @property
    def map_refs(self) -> tuple[cst.Attribute, ...]: ...
    @property
    def private_refs(self) -> tuple[cst.Attribute, ...]: ...
    @property
    def defs(self) -> tuple[cst.FunctionDef, ...]: ...
    @property
    def exprs(self) -> tuple[cst.SimpleStatementLine, ...]: ...
    @property
    def nodes(self) -> tuple[cst.CSTNode, ...]: ...
    @property
    def attr_values(self) -> Mapping[str, list[cst.BaseExpression | None]]: ...

    def wrapper_calls(self) -> list[cst.Call]: ...
    def of_type(self, kind: type[NodeT], *more: type[NodeT]) -> list[NodeT]: ...
    def own(self, idiom: str) -> tuple[Record, ...]: ...
    def parent(self, node: cst.CSTNode | None) -> cst.CSTNode | None: ...
    def scope(self, node: cst.CSTNode | None) -> Scope | None: ...
    def qn(self, node: cst.CSTNode | None, raw: bool = False) -> set[str]: ...
    def pos(self, node: cst.CSTNode) -> tuple[int, int]: ...
    def where(self, node: cst.CSTNode | None) -> int: ...
    def subtree(self, node: cst.CSTNode) -> Recorded | None: ...
    def referents(self, name: cst.Name) -> list[BaseAssignment]: ...
    def simple_assign_value(
        self, assignment: BaseAssignment) -> tuple[cst.SimpleStatementLine, cst.BaseExpression] | None: ...
    def bound_value(self, name: cst.Name) -> cst.BaseExpression | None: ...
    def function_def_for(self, name: cst.Name) -> cst.FunctionDef | None: ...
    def key(self, expr: cst.BaseExpression) -> Key | None: ...
    def is_graph(self, receiver: cst.BaseExpression) -> bool: ...
    def quiet(self, expr: cst.BaseExpression) -> bool: ...
    def handed_on(self, name: str) -> bool: ...
    def external(self, spelling: str) -> External | None: ...
    def is_map_call(self, call: cst.CSTNode | None) -> bool: ...
    def spell(self, value: str, text: str) -> None: ...
    def spelled(self, value: str) -> str: ...
    def memo(self, key: Hashable, compute: Callable[[], T]) -> T: ...


class Converting(Protocol):
    """What a converting rule may use of the rewrite's builder (rewrite.Builder answers): the
    facts it reads, the imports it adds, and the builder's answers about names, conversions and
    what earlier rules decided. A rule returns its edits (plan.Edit); the builder applies them."""

    @property
    def imports(self) -> Imports: ...
    @property
    def facts(self) -> Facts: ...
    @property
    def use_runtime(self) -> bool: ...
    @property
    def sites(self) -> list[Site]: ...
    @property
    def taken(self) -> set[str]: ...
    @property
    def builtins(self) -> dict[tuple, str]: ...
    @property
    def tf(self) -> str: ...

    def import_module(self, module: str) -> str: ...
    def spelled(self, func: cst.BaseExpression) -> str: ...
    def pointing(self, calls: Sequence[cst.BaseExpression], name: str) -> list[Edit]: ...
    def called_as(self, reg: Registration) -> str: ...
    def callable_name(self, reg: Registration) -> str: ...
    def conversion(self, reg: Registration) -> Conversion: ...
    def is_dead(self, node: cst.CSTNode) -> bool: ...
    def renamed(self, node: cst.CSTNode) -> bool: ...
    def accepted_own(self) -> dict[str, list]: ...


class Record(Protocol):
    """A record of an idiom's own kind (``Gathered.own``): its verdict, and the code it runs."""

    refusal: Refusal | None

    def runs(self) -> list[cst.CSTNode]: ...


if TYPE_CHECKING:
    # Each hook's rule, as a type: @rule(hook) and idioms.rules(hook) are typed by these, so mypy
    # checks every rule's parameters and result against its hook.
    Target = Registration | Dispatch | BuiltinGradient | External  # what a map entry's target is
    GatherRule = Callable[[Facts], Gathered]
    CheckSiteRule = Callable[[Facts, Site], Checked]
    SettleRule = Callable[[Facts], Settled]
    FinishRule = Callable[[Facts], list[Diagnostic]]
    TakeRule = Callable[[Facts], Taken]
    CallsRule = Callable[[Taken], list[cst.Call]]
    EmitAllRule = Callable[[Converting, Taken], list[Edit]]
    HintRule = Callable[[Facts, cst.BaseExpression, Site | None], Hint | None]
    WhyNotRule = Callable[[Facts, cst.BaseExpression, Site | None], str | None]
    ConvertCallRule = Callable[[Converting, Site, cst.BaseExpression, OpType, Target], Converted | None]
    ConvertRegistrationRule = Callable[[Converting, Registration, list[cst.Call]], list[Edit] | None]
    RewriteModuleRule = Callable[[cst.Module, Plan], cst.Module | None]
    EditModuleRule = Callable[[Converting], list[Edit]]
    ConvertOwnRule = Callable[[Converting, list[Any]], list[Edit]]
    AnyRule = TypeVar("AnyRule", bound=Callable[..., Any])
