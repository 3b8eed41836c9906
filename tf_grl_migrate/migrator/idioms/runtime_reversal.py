"""--use-runtime: a registration whose gradient is exactly ``-S * grad`` of an Identity op becomes
``tf_grl_migrate.flip_gradient(x, S)`` at each use (the runtime shim, gradients proven equal).
Anything else keeps the inline custom gradient (registered_gradient): never a refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ...knowledge import ops
from ..nodes import enclosing_scopes, is_docstring, load_names, mentions_in, parsed_expression
from ..plan import Drop, DropDef, DropStatement, Edit, Keep, Recall, RuntimeScale
from . import registered_gradient
from .base import Idiom, source
from .contract import rule

if TYPE_CHECKING:
    from ..sites import Registration
    from .contract import Converting


IDIOM = Idiom(
    name="runtime_reversal",
    summary="with --use-runtime, a gradient reversal becomes tf_grl_migrate.flip_gradient(x, l)",
    cases=("format_name_negated_grad", "random_name_scalar_mul", "call_form_registration", "variable_scale"),
    runtime=True,
    valid=(source("""
        import tensorflow as tf


        @tf.RegisterGradient("FlipHalf")
        def _flip_half(op, grad):
            return [-0.5 * grad]


        def flip(x):
            with tf.get_default_graph().gradient_override_map({"Identity": "FlipHalf"}):
                return tf.identity(x)
        """),),
)


def scale(builder: Converting, reg: Registration, calls: list[cst.Call]) -> cst.BaseExpression | None:
    """The scale S when the gradient is exactly ``-S * grad`` of an Identity op, else None."""
    conversion = builder.conversion(reg)
    forward = ops.op_type_of_callable(builder.facts.qn(conversion.forward, raw=True))
    if conversion.arity != 1 or forward is None or forward.name != "Identity":
        return None
    if conversion.name_keyword is not None:  # flip_gradient(x, l) takes no name: the inline code keeps it
        return None
    if reg.op_refs or reg.refusal:
        return None
    body = [s for s in reg.function.body.body if not is_docstring(s)]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return None
    ret = body[0].body[0]
    if not isinstance(ret, cst.Return) or ret.value is None:
        return None
    value = ret.value
    if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
        value = value.elements[0].value
    grad = reg.function.params.params[1].name.value
    scale = match_reversal(builder, value, grad)
    if scale is None or not visible_at_sites(builder, scale, calls):
        return None
    return scale


def match_reversal(builder: Converting, e: cst.BaseExpression, grad: str) -> cst.BaseExpression | None:
    def is_grad(x: cst.BaseExpression | None) -> bool:
        return isinstance(x, cst.Name) and x.value == grad

    def negated(x: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(x, cst.UnaryOperation) and isinstance(x.operator, cst.Minus):
            return x.expression
        if isinstance(x, cst.Call) and len(x.args) == 1 and builder.facts.qn(x.func) & ops.NEGATIVE:
            return x.args[0].value
        return None

    one = cst.Float("1.0")
    if is_grad(negated(e)):
        return one
    pairs = []
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        pairs = [(e.left, e.right), (e.right, e.left)]
    elif isinstance(e, cst.Call) and len(e.args) == 2 and not any(a.keyword for a in e.args):
        names = builder.facts.qn(e.func)
        if names & (ops.MULTIPLY | ops.SCALAR_MUL):
            a, b = e.args[0].value, e.args[1].value
            pairs = [(b, a)] if names & ops.SCALAR_MUL else [(a, b), (b, a)]
    for g, other in pairs:
        if is_grad(negated(g)) and not mentions_in(other, grad):  # -grad * S, tf.negative(grad) * S
            return other
        scale = negated(other)
        if is_grad(g) and scale is not None and not mentions_in(scale, grad):  # grad * -S
            return scale
    return None


def visible_at_sites(builder: Converting, expr: cst.BaseExpression, calls: list[cst.Call]) -> bool:
    """Every name in ``expr`` is bound in a scope enclosing every call site, so it means the same there."""
    for name in load_names(expr):
        refs = builder.facts.referents(name)
        if not refs:
            return False
        for call in calls:
            chain = enclosing_scopes(builder.facts.scope(call))
            if any(ref.scope not in chain for ref in refs):
                return False
    return True


@rule("convert_registration")
def convert_registration(builder: Converting, reg: Registration, calls: list[cst.Call]) -> list[Edit] | None:
    """Under ``--use-runtime``, an exact reversal's calls become ``tf_grl_migrate.flip_gradient``."""
    found = scale(builder, reg, calls) if builder.use_runtime and not reg.maker else None
    return None if found is None else emit(builder, reg, found, calls)


def emit(builder: Converting, reg: Registration, scale: cst.BaseExpression, calls: list[cst.Call]) -> list[Edit]:
    edits: list[Edit] = [DropDef(reg.function)]
    if reg.kind == "decorator":
        edits += registered_gradient.hoist_guard(builder, reg)
    else:  # "call" form (a factory's scale is never visible outside it)
        edits.append(DropStatement(cst.ensure_type(reg.stmt, cst.SimpleStatementLine)))
    builder.imports.runtime()

    def to_flip(updated: cst.Call) -> cst.Call:
        arg = updated.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return cst.Call(func=parsed_expression("tf_grl_migrate.flip_gradient"),
                        args=[arg, cst.Arg(scale.deep_clone())])

    for call in calls:
        edits += [Recall(call, to_flip), RuntimeScale(call, scale),
                  Drop(call.func)]  # e.g. array_ops.identity: its import may now be unused
    return [*edits, Keep(scale)]  # the scale moves to the call sites: its names stay bound
