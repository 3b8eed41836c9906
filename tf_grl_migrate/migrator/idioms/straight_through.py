"""Gradients TensorFlow provides, named as the target: a straight-through estimator
(``{"Sign": "Identity"}``) or a borrowed gradient (``{"Mul": "Add"}``) becomes a generated
``@tf.custom_gradient`` function around just that op, whose gradient is TensorFlow's own math."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import libcst as cst

from ...knowledge import ops
from ..nodes import code_of, fresh_name, input_names, load_names, name_keyword_code, parsed_statement
from ..plan import Before
from ..verdicts import Refusal
from .base import Idiom, source
from .contract import Converted, rule

if TYPE_CHECKING:
    from ..sites import Site
    from .contract import Converting, Target


IDIOM = Idiom(
    name="straight_through",
    summary="a TensorFlow gradient named as the target: a generated custom gradient around that op",
    codes=("GRL109",),
    examples={
        "GRL109": source("""
            import tensorflow as tf


            def f(a, b):
                with tf.get_default_graph().gradient_override_map({"Maximum": "Identity"}):
                    return tf.maximum(a, b)
            """),
    },
    cases=("sign_straight_through", "round_quantize_straight_through", "floor_and_ceil_straight_through",
           "ternary_mul_borrows_add_gradient"),
    valid=(source("""
        import tensorflow as tf


        def binarize(x):
            g = tf.get_default_graph()
            with g.gradient_override_map({"Sign": "Identity"}):
                return tf.sign(x)
        """),),
)


def check(op: ops.OpType, target: ops.BuiltinGradient) -> Refusal | None:
    """A TensorFlow gradient reads as many op inputs as it was written for: the refusal when the
    mapped op has another number (a one-input gradient for a two-input op is ambiguous)."""
    if op.arity == target.arity:
        return None
    if target.arity == 1:
        return Refusal.of("GRL109", "ambiguous", gradient=target.name, arity=op.arity, op=op.name)
    return Refusal.of("GRL109", "arity", gradient=target.name, reads=target.arity, op=op.name, arity=op.arity)


@rule("convert_call")
def convert_call(
        builder: Converting, site: Site, call: cst.BaseExpression, op: ops.OpType, target: Target) -> Converted | None:
    """A call whose target is a gradient TensorFlow provides: the generated function's name."""
    return emit(builder, site, call, op, target) if isinstance(target, ops.BuiltinGradient) else None


def emit(builder: Converting, site: Site, call: cst.BaseExpression, op: ops.OpType,
         target: ops.BuiltinGradient) -> Converted:
    """One generated function per block, op type and `name=` computing a gradient TensorFlow
    provides (the pass-through of a straight-through estimator, Add's broadcast-reduced sum),
    defined just before the block (so `name=` reads the same variables, when the op is
    created, as before). ``call`` is the op call, or the ``a * b`` operator that creates it."""
    keyword = name_keyword_code(call) if isinstance(call, cst.Call) else None
    key = (site.with_node, op.name, keyword, isinstance(call, cst.Call))
    cached = builder.builtins.get(key)
    if cached:
        return Converted(cached)
    suffix = "straight_through" if target.name == "Identity" else f"{target.name.lower()}_gradient"
    name = fresh_name(f"_{op.name.lower()}_{suffix}", builder.taken)
    builder.builtins[key] = name
    forwarded = "" if keyword is None else f", name={keyword}"
    used = {n.value for a in getattr(call, "args", ()) if a.keyword is not None for n in load_names(a.value)}
    inputs = [fresh_name(n, used) for n in input_names(op.arity)]
    grad_fn = fresh_name("grad_fn", used)
    if isinstance(call, cst.Call):
        forward = f"{builder.spelled(call.func)}({', '.join(inputs)}{forwarded})"
    else:
        assert isinstance(call, cst.BinaryOperation)  # the operators the block's check let through: `*`, `-`
        forward = f"{inputs[0]}{code_of(call.operator)}{inputs[1]}"
    body = textwrap.indent(target.grad_body(builder.tf, "dy", inputs), " " * 8)
    src = (f"@{builder.tf}.custom_gradient\n"
           f"def {name}({', '.join(inputs)}):\n"
           f"    def {grad_fn}(dy):\n"
           f"{body}\n"
           f"    return {forward}, {grad_fn}\n")
    return Converted(name, (Before(site.with_node, parsed_statement(src)),))
