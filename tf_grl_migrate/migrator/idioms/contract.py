"""The rule contract: the hooks an idiom may define, each with its parameters and what it returns,
and the registry its rules are declared into with ``@rule(hook)``. A hook not named here, or a
rule whose parameters are not the hook's, fails at import; the order in which the idioms' rules
run is ``idioms.ORDER``, checked against what is declared.

Deciding (the planner runs these; ``facts`` is what it knows of the module, read-only: ``Facts``):

- ``gather(facts) -> Gathered``: the records the idiom decides about (registrations, override
  blocks), and the diagnostics found on the way;
- ``check_site(facts, site) -> Refusal | None``: a block's verdict (it may fill the block's
  ``entries`` and ``calls``, the record's own findings);
- ``settle(facts) -> Settled``: verdicts that spread between records, run until nothing changes;
- ``finish(facts) -> list[Diagnostic]``: what is said once every record is decided;
- ``--use-runtime``'s takeovers of blocks the inline rewrite refuses: ``take(facts) -> Taken``,
  ``calls(taken) -> list`` (the map calls moved), ``emit_all(builder, taken) -> None``, and for a
  refused block ``hint(facts, call, site) -> str | None`` (without ``--use-runtime``: that it
  would take it) and ``why_not(facts, call, site) -> str | None`` (under it: why not).

Converting (the rewrite runs these; ``builder`` is the edit plan being built):

- ``convert_call(builder, site, call, op, target) -> str | None``: the name an op call now calls;
- ``convert_registration(builder, reg, calls) -> bool``: whether it converted the registration;
- ``rewrite_module(module, plan) -> Module | None``: the module replaced whole;
- ``edit_module(builder) -> list[Diagnostic]``: edits beyond the sites, and notes;
- ``convert_own(builder, records) -> None``: the idiom's own records (``Gathered.own``) no
  verdict refused.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol


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


def rule(hook: str) -> Callable:
    """Declare the decorated function as its idiom's rule for ``hook``."""
    spec = HOOKS.get(hook)
    if spec is None:
        raise TypeError(f"@rule({hook!r}): no such hook; the hooks are {', '.join(sorted(HOOKS))}")

    def declare(function: Callable) -> Callable:
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


@dataclass
class Settled:
    """What a settle rule decided this round: ``verdicts``, (record, Refusal) pairs the planner
    gives each record without one, and whether it changed its own records (``changed``)."""

    verdicts: list = field(default_factory=list)
    changed: bool = False


@dataclass
class Taken:
    """What a runtime rule takes: the blocks or calls it moves (its own records), and the
    registrations those may name, kept as they are (the planner refuses them for the inline
    rewrite with ``keep``)."""

    taken: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    keep: Any = None  # the Refusal the kept registrations get


class Facts(Protocol):
    """What a rule may read of the module (analysis.RuleFacts answers; rules never write it):
    the records so far and what the planner's one walk found, as tuples and read-only maps."""

    module: Any
    source: str
    use_runtime: bool
    links: Any
    registrations: tuple
    sites: tuple
    loose_calls: tuple
    moved: frozenset
    withs: tuple
    map_calls: tuple
    name_withs: tuple
    name_calls: tuple
    map_refs: tuple
    private_refs: tuple
    defs: tuple
    exprs: tuple
    nodes: tuple
    attr_values: Any

    def wrapper_calls(self) -> list: ...
    def own(self, idiom: str) -> tuple: ...
    def parent(self, node) -> Any: ...
    def scope(self, node) -> Any: ...
    def qn(self, node, raw: bool = False) -> set: ...
    def pos(self, node) -> tuple: ...
    def where(self, node) -> int: ...
    def referents(self, name) -> list: ...
    def simple_assign_value(self, assignment) -> Any: ...
    def bound_value(self, name) -> Any: ...
    def function_def_for(self, name) -> Any: ...
    def key(self, expr) -> Any: ...
    def is_graph(self, receiver) -> bool: ...
    def quiet(self, expr) -> bool: ...
    def handed_on(self, name: str) -> bool: ...
    def external(self, spelling: str) -> Any: ...
    def is_map_call(self, call) -> bool: ...
    def spell(self, value: str, text: str) -> None: ...
    def spelled(self, value: str) -> str: ...
    def memo(self, key, compute: Callable) -> Any: ...
