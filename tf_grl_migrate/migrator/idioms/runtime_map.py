"""--use-runtime: a model-wide override the inline rewrite must refuse (the block builds a model
through code the tool cannot see, the map is chosen at run time, the map is entered by hand)
keeps its registrations and enters ``tf_grl_migrate.gradient_override_map`` instead of the
graph's: the runtime gives ops of a mapped type created in the block the mapped gradient, TF1's
meaning, eagerly, in a ``tf.function`` and in a ``tf.compat.v1`` graph (there it is the graph's
own map). Only the call changes: ``g.gradient_override_map(m)`` becomes
``tf_grl_migrate.gradient_override_map(m)``, with ``graph=g`` where ``g`` may not be the default
graph (see ``passed_graph``); registrations stay, TF1-only names in them respelled for TF2.
Why it is built so: docs/design.md, "migrator/idioms/runtime_map.py"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from ...knowledge import ops
from ..nodes import attributes_in, code_of, parsed_expression, receiver, string_value, with_keywords
from ..plan import Drop, Edit, Keep, Recall
from ..sites import Dispatch, Registration, is_string_literal
from ..verdicts import Hint, Refusal
from . import override_block, registered_gradient
from .base import Idiom, source
from .contract import Taken, rule
from .targets import match_target

if TYPE_CHECKING:
    from ..sites import Site
    from .contract import Converting, Facts


IDIOM = Idiom(
    name="runtime_map",
    summary="with --use-runtime, a model-wide override enters tf_grl_migrate.gradient_override_map",
    cases=("model_wide_guided_relu", "guided_relu_hidden_op_wrapper", "map_entered_by_hand", "map_chosen_at_run_time",
           "override_map_changed_after_built", "unknown_op_type", "target_name_values_not_known",
           "override_block_nested_in_another"),
    runtime=True,
    valid=(source("""
        import tensorflow as tf


        @tf.RegisterGradient("GuidedRelu")
        def _guided_relu(op, grad):
            return tf.where(grad > 0.0, grad * tf.cast(op.outputs[0] > 0.0, grad.dtype), tf.zeros_like(grad))


        def guided(model, x):
            with tf.get_default_graph().gradient_override_map({"Relu": "GuidedRelu"}):
                return model(x)
        """),),
)

# refusals of the inline rewrite that the runtime map does not share: the block's ops, the
# map's form, how a registration would convert (the runtime keeps it)
_INLINE_ONLY = frozenset({"GRL101", "GRL102", "GRL103", "GRL104", "GRL105", "GRL106", "GRL108", "GRL110"})
# op types TF1 made along its own paths (a ref variable's read is an Identity, `w/read`; casts by
# dtype) where TF2 makes other ops or none: a map of them around code the tool cannot see would
# not be TF1's in TF2
IMPLICIT_TYPES = frozenset({"Identity", "Cast"})
KEPT = Refusal.of("GRL110", "runtime_kept", says_runtime=True)
ALL = "all"  # a block whose targets are not known: every registration of the module may be named


@rule("take")
def take(facts: Facts) -> Taken:
    """The map calls (``with`` items, and calls entered by hand) that move onto the runtime map,
    and the registrations they may name, kept (refused for the inline rewrite with KEPT, whose
    other blocks using them then move too: the planner settles and asks again)."""
    moved = facts.moved  # by the rules before this one
    chosen: dict = {}
    for site in facts.sites:
        call = site.map_call
        if site.refusal and call not in moved and eligible(facts, call, site) is None:
            chosen[call] = targets(facts, call)
    for call in facts.loose_calls:
        if eligible(facts, call, None) is None:
            chosen[call] = targets(facts, call)
    kept = [r for regs in chosen.values() for r in (facts.registrations if regs is ALL else regs)]
    return Taken(list(chosen), list(dict.fromkeys(kept)), KEPT)


@rule("calls")
def calls(taken: Taken) -> list[cst.Call]:
    return taken.taken


@rule("emit_all")
def emit_all(builder: Converting, taken: Taken) -> list[Edit]:
    """Each moved map call; each registration a moved block may name stays, spelt as TF2 spells it."""
    return [*(e for call in taken.taken for e in emit(builder, call)),
            *(e for reg in taken.kept if reg.fdef is not None
              for e in registered_gradient.tf2_spelling(builder.facts, reg).edits())]


@rule("hint")
def hint(facts: Facts, call: cst.BaseExpression, site: Site | None) -> Hint | None:
    return override_block.RUNTIME_HINT if eligible(facts, cst.ensure_type(call, cst.Call), site) is None else None


@rule("why_not")
def why_not(facts: Facts, call: cst.BaseExpression, site: Site | None) -> str | None:
    """Why a refused block (whose refusal is the inline rewrite's own) stays refused."""
    if site is not None and not (site.refusal and site.refusal.code in _INLINE_ONLY):
        return None
    return eligible(facts, cst.ensure_type(call, cst.Call), site)


def eligible(facts: Facts, call: cst.Call, site: Site | None) -> str | None:
    """None when the call can move onto the runtime map, else why not (for tests and hints)."""
    if site is not None and site.refusal and site.refusal.code not in _INLINE_ONLY:
        return f"{site.refusal.code} holds for the runtime map too"
    if site is not None and site.item.asname is not None:
        return "the map is bound with `as`"
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return "the call does not take one positional map"
    if not (facts.is_graph(receiver(call)) or _entered_as_default(facts, call)):
        return "the receiver is not provably a tf.Graph"
    mapping = override_block.resolve_map(facts, call.args[0].value)
    anchor = site.with_node if site is not None else call
    if isinstance(mapping, cst.Dict):
        return next((why for element in mapping.elements
                     if (why := _entry_unusable(facts, element, site, mapping, anchor))), None)
    for reg in facts.registrations:
        why = _unusable(facts, reg)
        if why:
            return why
    return None


def _entry_unusable(facts: Facts, element: cst.BaseDictElement, site: Site | None, mapping: cst.Dict,
                    anchor: cst.CSTNode) -> str | None:
    """Why one entry of a literal map cannot move onto the runtime map: its key is no op type the
    runtime map can find (or one TF1 made along unseen paths), its target no registration of
    this module the runtime map can call; None where it can."""
    key = string_value(element.key) if isinstance(element, cst.DictElement) else None
    if key is None:
        return "a map key is not a string literal"
    if not ops.is_registered_op_type(key) or key in ops.PY_FUNC_TYPES:
        return f"{key!r} is no op type the runtime map can find"
    if key in IMPLICIT_TYPES and (site is None or override_block.unseen_code(facts, site, mapping) is not None):
        return (f"TF1 made {key!r} ops of its own along paths like this block's (a ref variable's read, "
                f"`w/read`, is one) where TF2 makes other ops or none, so no map in TF2 is sure to give "
                f"TF1's gradients")
    target = match_target(facts, element.value)
    if isinstance(target, Refusal):
        return target.message if is_string_literal(element.value) else None  # a literal registered nowhere
    if not isinstance(target, (Registration, Dispatch, ops.BuiltinGradient)):
        return "a target is registered in another module"
    for reg in target.choices.values() if isinstance(target, Dispatch) else (
            [] if isinstance(target, ops.BuiltinGradient) else [target]):
        why = _registration_unusable(facts, reg, anchor)
        if why:
            return why
    return None


def targets(facts: Facts, call: cst.Call) -> Any:  # the registrations the map may name, or ALL
    """The registrations a chosen call may name: a list, or ALL."""
    mapping = override_block.resolve_map(facts, call.args[0].value)
    if not isinstance(mapping, cst.Dict):
        return ALL
    found: list = []
    for element in mapping.elements:
        target = match_target(facts, element.value)
        if isinstance(target, Refusal):
            return ALL
        if isinstance(target, Dispatch):
            found.extend(target.choices.values())
        elif isinstance(target, Registration):
            found.append(target)
    return found


def _not_tf2(facts: Facts, reg: Registration) -> str | None:
    """Why the kept gradient function would fail under TF2 on a name or keyword (GRL114's message),
    or None: names and keywords TF2 spells otherwise are respelled in place, as the inline rewrite
    does in the code it moves."""
    found = registered_gradient.tf2_spelling(facts, reg).refusal if reg.fdef is not None else None
    return found.message if found else None


# what the op a gradient receives offers under the runtime map (override_map.GraphOp)
OP_ATTRIBUTES = frozenset({"inputs", "outputs", "type", "name", "get_attr", "graph"})


def _unusable(facts: Facts, reg: Registration) -> str | None:
    """Why a kept gradient function would fail under the runtime map where TF1's worked, or None."""
    if reg.fdef is None:  # a function handed in (`tf.RegisterGradient(name)(fn)`): the caller's, kept as it is
        return None
    params = reg.function.params
    if len(params.params) < 2 and params.star_arg in (None, cst.MaybeSentinel.DEFAULT):
        return reg.refusal.message if reg.refusal else f"`{reg.function.name.value}` does not take (op, grad)"
    if params.params:
        op = params.params[0].name.value
        for attr in attributes_in(reg.function.body, facts.subtree(reg.function.body)):  # `op.node_def.name`
            while isinstance(attr.value, cst.Attribute):
                attr = attr.value
            if isinstance(attr.value, cst.Name) and attr.value.value == op and attr.attr.value not in OP_ATTRIBUTES:
                return (
                    f"gradient function `{reg.function.name.value}` reads `{code_of(attr)}`, which the op handed to "
                    f"a gradient under tf_grl_migrate.gradient_override_map does not offer (only "
                    f"{', '.join(sorted(OP_ATTRIBUTES))})"
                )
    return _not_tf2(facts, reg)


def _registration_unusable(facts: Facts, reg: Registration, anchor: cst.CSTNode) -> str | None:
    why = _unusable(facts, reg)
    if why:
        return why
    registration = reg.stmt if reg.kind != "decorator" else reg.fdef
    if (facts.scope(registration) is facts.scope(anchor)
            and facts.where(registration) > facts.where(anchor)):
        return "the registration is defined after the block, and the runtime map looks names up on entry"
    return None


def _entered_as_default(facts: Facts, call: cst.Call) -> bool:
    """``with graph.as_default(), graph.gradient_override_map(m):`` (or the map inside ``with
    graph.as_default():``): the receiver is entered as the default graph, so it is a graph."""
    graph = code_of(receiver(call))
    node = facts.parent(call)
    while node is not None:
        if isinstance(node, cst.With):
            for item in node.items:
                entered = item.item
                if (isinstance(entered, cst.Call) and isinstance(entered.func, cst.Attribute)
                        and entered.func.attr.value == "as_default" and not entered.args
                        and code_of(entered.func.value) == graph):
                    return True
        node = facts.parent(node)
    return False


def passed_graph(facts: Facts, receiver: cst.BaseExpression) -> Any:
    """The receiver, to pass as ``graph=`` (the runtime applies TF's own map to it in a
    ``tf.compat.v1`` graph), or None where the runtime's own choice, the default graph, is the
    same graph: ``tf.get_default_graph()``, and ``<expr>.graph`` (a tensor's, an op's or a
    session's graph: where the block's ops go; eagerly, a tensor has no graph to pass), or a name
    only ever bound to one of these (its look-up may then go)."""
    if _default_or_owner_graph(facts, receiver):
        return None
    if isinstance(receiver, cst.Name):
        refs = facts.referents(receiver)
        found = [facts.simple_assign_value(ref) for ref in refs]
        if refs and all(f is not None and _default_or_owner_graph(facts, f[1]) for f in found):
            return None
    return receiver


def _default_or_owner_graph(facts: Facts, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call):
        return bool(facts.qn(expr.func) & ops.DEFAULT_GRAPH)
    return isinstance(expr, cst.Attribute) and expr.attr.value == "graph"


def emit(builder: Converting, call: cst.Call) -> list[Edit]:
    graph = receiver(call)
    passed = passed_graph(builder.facts, graph)
    edits: list[Edit] = [Drop(call.func)]  # `g = tf.get_default_graph()` goes when nothing else reads g
    if passed is not None:
        edits.append(Keep(graph))  # passed on as graph=
    builder.imports.runtime()

    def build(updated: cst.Call) -> cst.Call:
        args = with_keywords(updated.args, [("graph", receiver(updated))] if passed is not None else [])
        return updated.with_changes(func=parsed_expression("tf_grl_migrate.gradient_override_map"), args=args)

    return [*edits, Recall(call, build)]
