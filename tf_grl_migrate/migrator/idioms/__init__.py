"""One module per idiom of TF1 gradient code the migrator knows: what it emits, the codes it
raises (with their messages, where the idiom is the only one to give them) and its examples.

- ``override_block``: the ``with g.gradient_override_map({...}):`` block itself (the map, the
  graph, the ops the block makes); a block that makes no mapped op is dissolved.
- ``registered_gradient``: ``@RegisterGradient(name)`` used by a block -> ``@tf.custom_gradient``.
- ``straight_through``: a TensorFlow gradient named as the target (``{"Sign": "Identity"}``,
  ``{"Mul": "Add"}``) -> a generated custom gradient around just that op.
- ``runtime_reversal`` (``--use-runtime``): an exact reversal -> ``tf_grl_migrate.flip_gradient``.
- ``runtime_map`` (``--use-runtime``): a model-wide block the inline rewrite refuses -> the same map
  entered through ``tf_grl_migrate.gradient_override_map``, registrations kept.
- ``py_func`` (``--use-runtime``): ``py_func`` with a registered gradient -> ``tf_grl_migrate.py_func``.
- ``dann_reexport`` (``--use-runtime``): a module holding only the DANN builder -> a re-export
  (a module rule: ``rewrite_module``).
- ``keras_layer``: a migrated module's Keras 2 layer code respelled for Keras 3 (``keras.engine``
  imports, the backend, ``self.trainable_weights = []``), notes where it cannot be (an edit rule:
  ``edit_module``).
- ``defun``: ``function.Defun(..., python_grad_func=g)`` / ``grad_func=G`` -> a ``@tf.custom_gradient``
  function of the same name (its own records: ``Gathered.own``, converted by ``convert_own``).
- ``migrated_path``: TF1-only names in the code a migrated site runs (its function, what a moved
  map's receiver was assigned) respelled for TF2 (an edit rule: ``edit_module``).

Each rule is a function its idiom declares with ``@rule(hook)`` (``contract.py``: the hooks,
their parameters and what they return); ``ORDER`` says, per hook, which idioms' rules run and in
which order, and is checked against what they declare when the rules are first asked for. The
planner (``analysis.py``) and the rewrite (``rewrite.py``) name no idiom: they run ``rules(hook)``.
Adding an idiom is its module plus its line in ORDER. What they record is in ``sites.py``.
Importing this package loads no idiom (nor libcst). tests/test_idioms.py runs every example and
checks that every code in codes.CODES is owned by one idiom (or by the file layer: notebooks,
reading, writing) and has a row in docs/idioms.md."""

from __future__ import annotations

import functools
import importlib
import sys
from typing import TYPE_CHECKING, Callable, Literal, NamedTuple, overload

from ...codes import RECIPE_OPENING
from ..verdicts import Hint
from .base import Idiom

if TYPE_CHECKING:
    import libcst as cst

    from ..sites import Site
    from .contract import (
        CallsRule,
        CheckSiteRule,
        ConvertCallRule,
        ConvertOwnRule,
        ConvertRegistrationRule,
        EditModuleRule,
        EmitAllRule,
        Facts,
        FinishRule,
        GatherRule,
        HintRule,
        RewriteModuleRule,
        SettleRule,
        TakeRule,
        WhyNotRule,
    )

# Per hook, the idioms whose rules run, in this order. The registrations are gathered before the
# blocks that use them; the first refusal of a block stands; an exact reversal converts onto the
# runtime (runtime_reversal) before registered_gradient converts every other registration; the
# runtime takes py_func's blocks before the runtime map takes what is left.
_RUNTIME = ("py_func", "runtime_map")
ORDER: dict[str, tuple[str, ...]] = {
    "gather": ("registered_gradient", "override_block", "defun"),
    "check_site": ("override_block",),
    "settle": ("registered_gradient",),
    "finish": ("registered_gradient", "override_block", "defun"),
    **{hook: _RUNTIME for hook in ("take", "calls", "emit_all", "hint", "why_not")},
    "convert_call": ("straight_through",),
    "convert_registration": ("runtime_reversal", "registered_gradient"),
    "rewrite_module": ("dann_reexport",),
    "edit_module": ("keras_layer", "migrated_path"),
    "convert_own": ("defun",),
}
MODULES = tuple(dict.fromkeys(idiom for order in ORDER.values() for idiom in order))  # every idiom


class RuntimeRule(NamedTuple):
    """One idiom's five ``--use-runtime`` rules (contract.RUNTIME_HOOKS)."""

    name: str
    take: TakeRule
    calls: CallsRule
    emit_all: EmitAllRule
    hint: HintRule
    why_not: WhyNotRule


def all_idioms() -> list[Idiom]:
    return [importlib.import_module(f"{__name__}.{name}").IDIOM for name in MODULES]


@functools.cache
def _registry() -> dict:
    """Every idiom loaded, and what they declare checked against ORDER."""
    from .contract import HOOKS, REGISTRY, RUNTIME_HOOKS

    all_idioms()
    if set(ORDER) != set(HOOKS):
        raise TypeError(f"idioms.ORDER names hooks {sorted(set(ORDER) ^ set(HOOKS))} wrongly")
    for hook, order in ORDER.items():
        declared = REGISTRY.get(hook, {})
        if set(declared) != set(order):
            raise TypeError(f"{hook} rules are declared by {sorted(declared)} but idioms.ORDER runs {list(order)}")
    for idiom in MODULES:  # a function named for a hook but not declared would be dropped silently
        module = sys.modules[f"{__name__}.{idiom}"]
        stray = [h for h in HOOKS if getattr(getattr(module, h, None), "__module__", None) == module.__name__
                 and REGISTRY.get(h, {}).get(idiom) is not getattr(module, h)]
        if stray:
            raise TypeError(f"idiom {idiom} defines {', '.join(stray)} without @rule")
    for idiom in {i for hook in RUNTIME_HOOKS for i in REGISTRY.get(hook, {})}:
        missing = [hook for hook in RUNTIME_HOOKS if idiom not in REGISTRY.get(hook, {})]
        if missing:
            raise TypeError(f"idiom {idiom} declares runtime rules but not {', '.join(missing)}")
    return REGISTRY


@overload
def rules(hook: Literal["gather"]) -> tuple[GatherRule, ...]: ...
@overload
def rules(hook: Literal["check_site"]) -> tuple[CheckSiteRule, ...]: ...
@overload
def rules(hook: Literal["settle"]) -> tuple[SettleRule, ...]: ...
@overload
def rules(hook: Literal["finish"]) -> tuple[FinishRule, ...]: ...
@overload
def rules(hook: Literal["convert_call"]) -> tuple[ConvertCallRule, ...]: ...
@overload
def rules(hook: Literal["convert_registration"]) -> tuple[ConvertRegistrationRule, ...]: ...
@overload
def rules(hook: Literal["rewrite_module"]) -> tuple[RewriteModuleRule, ...]: ...
@overload
def rules(hook: Literal["edit_module"]) -> tuple[EditModuleRule, ...]: ...
@overload
def rules(hook: Literal["convert_own"]) -> tuple[ConvertOwnRule, ...]: ...
def rules(hook: str) -> tuple:
    """The rules declared for ``hook``, in ORDER (typed by the hook: contract's rule types; the
    runtime hooks' come together, as ``runtime_rules``)."""
    declared = _registry()[hook]
    return tuple(declared[idiom] for idiom in ORDER[hook])


def idiom_of(rule: Callable) -> Idiom:
    """The idiom that declared ``rule``."""
    return sys.modules[rule.__module__].IDIOM


@functools.cache
def runtime_rules() -> tuple[RuntimeRule, ...]:
    """The ``--use-runtime`` takeovers of blocks the inline rewrite refuses, in ORDER: ``take``
    after the planner settled (contract.Taken), ``calls`` (the map calls moved), ``emit_all``; and
    for a refused block ``hint`` (without ``--use-runtime``: that it would take it) and ``why_not``
    (under it: why not)."""
    declared = _registry()
    return tuple(RuntimeRule(idiom, *(declared[hook][idiom] for hook in RuntimeRule._fields[1:]))
                 for idiom in _RUNTIME)


def runtime_hint(facts: Facts, call: cst.BaseExpression, site: Site | None) -> tuple[Hint, ...]:
    """What a refusal adds about ``--use-runtime`` (a hint, or none): without it, that a runtime
    rule would take the block, or, where the refusal's details give the runtime map's recipe by
    hand and no rule would take it, why that would not give TF1's gradients either; under it, why
    none did; nothing where neither applies."""
    found = runtime_rules()
    if facts.use_runtime:
        why = next((w for r in found if (w := r.why_not(facts, call, site))), None)
        return (Hint("runtime", "--use-runtime does not take it", f"--use-runtime does not take it: {why}."),) \
            if why else ()
    if site is not None and site.refusal is not None and site.refusal.says_runtime:
        return ()
    hint = next((h for r in found if (h := r.hint(facts, call, site))), None)
    if hint is None and site is not None and site.refusal is not None and RECIPE_OPENING in site.refusal.details:
        why = next((w for r in found if (w := r.why_not(facts, call, site))), None)
        if why:
            return (Hint("runtime", "--use-runtime does not take it",
                         "Here that map would not give TF1's gradients either, through --use-runtime or by hand: "
                         f"{why}."),)
    return (hint,) if hint else ()
