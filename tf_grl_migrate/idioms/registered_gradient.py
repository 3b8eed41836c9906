"""A gradient registered with ``@RegisterGradient(name)`` (decorator or call form, a factory's
product) and used through ``gradient_override_map`` becomes a ``@tf.custom_gradient`` function with
the same body, called where the op was made: ``op.inputs`` / ``op.outputs`` become its inputs and
forward result; a registration used with differing names, or chosen by a name, becomes a maker."""

from __future__ import annotations

import textwrap

import libcst as cst

from ..nodes import _code, _fresh, input_names, parsed_statement
from ..safety import SafetyError
from .base import Idiom, source

_BLOCK = '''
    def f(x):
        with tf.get_default_graph().gradient_override_map({"Identity": "%s"}):
            return tf.identity(x)
'''

IDIOM = Idiom(
    name="registered_gradient",
    summary="@RegisterGradient(name) used by an override block: a @tf.custom_gradient function",
    codes=("GRL102", "GRL103", "GRL106", "GRL107", "GRL110", "GRL114", "GRL202"),
    examples={
        "GRL102": source("""
            import tensorflow as tf

            """, _BLOCK % "Unknown"),
        "GRL103": source("""
            import tensorflow as tf


            @tf.RegisterGradient("Attr")
            def _attr(op, grad):
                return grad * op.get_attr("T")

            """, _BLOCK % "Attr"),
        "GRL106": source("""
            import tensorflow as tf


            @tf.RegisterGradient("Three")
            def _three(op, grad, extra):
                return grad

            """, _BLOCK % "Three"),
        "GRL107": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Identity": "Late"}):
                    y = tf.identity(x)

                @tf.RegisterGradient("Late")
                def _late(op, grad):
                    return -grad
                return y
            """),
        "GRL110": source("""
            import tensorflow as tf


            @tf.RegisterGradient("Rev")
            def _rev(op, grad):
                return -grad

            """, _BLOCK % "Rev", """

            def g(x):
                with tf.get_default_graph().gradient_override_map({"Identity": "Rev"}):
                    return encoder(x)
            """),
        "GRL114": source("""
            import tensorflow as tf


            @tf.RegisterGradient("Old")
            def _old(op, grad):
                return tf.contrib.layers.flatten(grad)

            """, _BLOCK % "Old"),
        "GRL202": source("""
            import tensorflow as tf


            @tf.RegisterGradient("Rev")
            def _rev(op, grad):
                return -grad


            @tf.RegisterGradient("Unused")
            def _unused(op, grad):
                return grad

            """, _BLOCK % "Rev"),
    },
    cases=("dann_builder_class", "plain_scale_gradient", "clip_gradient", "call_form_registration",
           "factory_call_form", "hardtanh_ste_reads_op_inputs", "sigmoid_override_reads_op_outputs",
           "registration_used_with_varying_names", "target_chosen_by_a_name",
           "stochastic_neuron_sub_gradient_on_an_operator", "registration_in_class_body_used_from_method"),
)


def emit(builder, reg):
    """The registration's function becomes the custom-gradient function (or its maker) in place:
    same body, ``op.inputs`` / ``op.outputs`` mapped; the registration itself (decorator, call
    statement, a guard around it, a factory's name argument) goes."""
    fdef = reg.fdef
    used = set(reg.body_names)
    inputs = [_fresh(n, used) for n in input_names(reg.arity)]
    output = _fresh("y", used) if reg.uses_output else None
    grad_fn = _fresh("grad_fn", used)
    for line in reg.dropped:
        builder.plan.removed_stmts.add(line)
        builder.plan.remove(line)
    for sub, (kind, index) in reg.op_refs.items():
        if index is None:  # the whole op.inputs / op.outputs
            builder.plan.renames[sub] = f"[{', '.join(inputs) if kind == 'in' else output}]"
            continue
        if kind == "in" and index >= reg.arity:
            raise SafetyError(f"op.inputs[{index}] of a {reg.arity}-input op")
        builder.plan.op_refs[sub] = inputs[index] if kind == "in" else output
    grad_param = fdef.params.params[1].name.value
    defined = builder.callable_name(reg) if reg.rename else fdef.name.value
    if reg.maker:  # def f(forward, name=None): @custom_gradient def wrapped(a, b): ...; return wrapped
        forward_p = _fresh("forward", used)
        name_p = _fresh("name", used) if reg.maker_name else None
        keyword = f", name={name_p}" if name_p else ""
        forward = f"{forward_p}({', '.join(inputs)}{keyword})"
        wrapped = _fresh("wrapped", used)
        head = (f"def {defined}({forward_p}{f', {name_p}=None' if name_p else ''}):\n"
                f"    @{builder.tf}.custom_gradient\n    def {wrapped}({', '.join(inputs)}):\n")
        foot = f"    return {wrapped}\n"
    else:
        keyword = "" if reg.name_keyword is None else f", name={reg.name_keyword}"
        if isinstance(reg.forward, cst.BaseBinaryOp):  # `a - b`: the same operator makes the op
            forward = f"{inputs[0]}{_code(reg.forward)}{inputs[1]}"
        else:
            forward = f"{builder.spelled(reg.forward)}({', '.join(inputs)}{keyword})"
        head = f"@{builder.tf}.custom_gradient\ndef {defined}({', '.join(inputs)}):\n"
        foot = ""
    if output:
        tail = (f"    {output} = {forward}\n    def {grad_fn}({grad_param}):\n        pass\n"
                f"    return {output}, {grad_fn}\n")
    else:
        tail = f"    def {grad_fn}({grad_param}):\n        pass\n    return {forward}, {grad_fn}\n"
    if reg.maker:
        tail = textwrap.indent(tail, "    ")
    template = parsed_statement(head + tail + foot)
    inner_index = 1 if output else 0

    def build(updated: cst.FunctionDef) -> cst.FunctionDef:
        outer = template.body
        block = outer.body[0].body if reg.maker else outer
        inner = block.body[inner_index].with_changes(body=updated.body)
        block = block.with_changes(body=[*block.body[:inner_index], inner, *block.body[inner_index + 1:]])
        if reg.maker:
            block = outer.with_changes(body=[outer.body[0].with_changes(body=block), *outer.body[1:]])
        return template.with_changes(body=block, leading_lines=updated.leading_lines,
                                     lines_after_decorators=updated.lines_after_decorators)

    builder.plan.defs[fdef] = build
    builder.plan.renames.update(reg.renames)
    if reg.kind == "decorator":
        builder.plan.remove(reg.decorator)
        hoist_guard(builder, reg)
    elif reg.kind == "call":
        builder.plan.removed_stmts.add(reg.stmt)
        builder.plan.remove(reg.stmt)
    else:
        builder.plan.remove(reg.name_expr)
        assign = parsed_statement(f"{reg.callable_name} = {_code(reg.factory_call)}\n")
        builder.plan.replace_stmts[reg.stmt] = assign.with_changes(leading_lines=reg.stmt.leading_lines)


def hoist_guard(builder, reg):
    """``if name not in registered: @RegisterGradient(name) ...; registered.add(name)`` -> the body."""
    block = builder.p.parents.get(reg.fdef)
    guard = builder.p.parents.get(block)
    if not (isinstance(guard, cst.If) and guard.orelse is None and isinstance(guard.test, cst.Comparison)):
        return
    test = guard.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.NotIn):
        return
    if builder.p.key(test.left) != reg.name_key:
        return
    registry = _code(test.comparisons[0].comparator)
    builder.plan.hoisted_ifs.add(guard)
    builder.plan.remove(test)
    for stmt in guard.body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
            call = stmt.body[0].value
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and _code(call.func.value) == registry and call.func.attr.value in ("add", "append")):
                builder.plan.removed_stmts.add(stmt)
                builder.plan.remove(stmt)
