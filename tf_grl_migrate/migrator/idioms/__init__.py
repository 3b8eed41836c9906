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
- ``migrated_path``: TF1-only names in the code a migrated site runs (its function, what a moved
  map's receiver was assigned) respelled for TF2 (an edit rule: ``edit_module``).

The planner (``analysis.py``) sees every registration and block of a module at once, since a
registration stands or falls with all its uses; it names no idiom: it runs the rules below
(``gather``, ``check_site``, ``settle``, the runtime rules, ``finish``), and ``rewrite.py``
runs the conversion rules (``convert_call``, ``convert_registration``) on the sites accepted. A
rule is a function an idiom module defines; adding an idiom is adding its module to MODULES.
What they record is in ``sites.py``. Importing this package loads no idiom (nor libcst);
``all_idioms()`` and the rule finders load them.
tests/test_idioms.py runs every example and checks that every code in codes.CODES is owned by one
idiom (or by the file layer: notebooks, reading, writing) and has a row in docs/idioms.md."""

from __future__ import annotations

import functools
import importlib

from .base import Idiom

# In this order the rules below are tried: runtime_reversal converts an exact reversal before
# registered_gradient, which converts every other registration; the registrations are gathered
# before the blocks that use them.
MODULES = ("runtime_reversal", "registered_gradient", "override_block", "straight_through", "py_func",
           "runtime_map", "dann_reexport", "keras_layer", "migrated_path")


def all_idioms() -> list[Idiom]:
    return [importlib.import_module(f"{__name__}.{name}").IDIOM for name in MODULES]


@functools.lru_cache(maxsize=None)
def _having(function: str) -> tuple:
    """The idiom modules that define ``function`` themselves (not a name they import), in MODULES order."""
    modules = [importlib.import_module(f"{__name__}.{name}") for name in MODULES]
    return tuple(m for m in modules if getattr(getattr(m, function, None), "__module__", None) == m.__name__)


def gather_rules() -> tuple:
    """The idioms that gather what is decided: ``gather(planner)`` (the registrations, each
    checked alone; then the blocks, and maps entered otherwise)."""
    return _having("gather")


def site_rules() -> tuple:
    """The idioms that check each override block (the first refusal stands):
    ``check_site(planner, site)`` -> a Refusal, or None."""
    return _having("check_site")


def settle_rules() -> tuple:
    """The idioms whose refusals spread between blocks and registrations, run until nothing
    changes: ``settle(planner)`` -> whether anything changed."""
    return _having("settle")


def finish_rules() -> tuple:
    """The idioms that report once every block is decided and the runtime rules took theirs:
    ``finish(planner)`` (appends to ``planner.diagnostics``)."""
    return _having("finish")


def call_rules() -> tuple:
    """The idioms that convert one overridden op call themselves, whatever the registrations:
    ``convert_call(builder, site, call, op, target)`` -> the name the call now calls, or None."""
    return _having("convert_call")


def registration_rules() -> tuple:
    """The idioms that convert a registration and the calls of its op (the first that takes it):
    ``convert_registration(builder, reg, calls)`` -> whether it did."""
    return _having("convert_registration")


def edit_rules() -> tuple:
    """The idioms that edit a migrated module beyond its sites, once they are converted and the
    code only they used is known dead: ``edit_module(builder)`` -> notes (diagnostics)."""
    return _having("edit_module")


def module_rules() -> tuple:
    """The idioms that may replace a migrated module whole: ``rewrite_module(module, plan)`` ->
    the new code, or None (under ``--use-runtime`` only where their IDIOM says ``runtime``)."""
    return _having("rewrite_module")


def runtime_rules() -> tuple:
    """The idiom modules that move blocks the inline rewrite refuses onto the runtime
    (``--use-runtime``), in MODULES order. Each defines five functions: ``take(planner)`` (after
    the planner settled: what it takes, a list), ``calls(taken)`` (the map calls it moved: no
    refusal for them), ``emit_all(builder, taken)``,
    and, for a refused block, ``hint(planner, call, site)`` (without ``--use-runtime``: the hint
    that it would take the block) and ``why_not(planner, call, site)`` (under it: why not)."""
    return _having("take")


def runtime_hint(planner, call, site) -> str:
    """What a refusal adds about ``--use-runtime``: without it, that a runtime rule would take the
    block; under it, why none did; nothing where neither applies."""
    rules = runtime_rules()
    if planner.use_runtime:
        why = next((w for rule in rules if (w := rule.why_not(planner, call, site))), None)
        return f" (--use-runtime does not take it: {why})" if why else ""
    if site is not None and site.refusal.says_runtime:
        return ""
    hint = next((h for rule in rules if (h := rule.hint(planner, call, site))), None)
    return f" ({hint})" if hint else ""
