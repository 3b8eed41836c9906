"""A gradient registered with ``@RegisterGradient(name)`` (decorator or call form, a factory's
product) and used through ``gradient_override_map`` becomes a ``@tf.custom_gradient`` function with
the same body, called where the op was made: ``op.inputs`` / ``op.outputs`` become its inputs and
forward result; a registration used with differing names, or chosen by a name, becomes a maker."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Union

import libcst as cst

from ...knowledge import ops
from ...report import Diagnostic
from ..facts import Export, External
from ..nodes import (
    attributes_in,
    calls_in,
    code_of,
    fresh_name,
    input_names,
    load_names,
    name_keyword_code,
    parsed_expression,
    parsed_statement,
    respelled_text,
)
from ..plan import Drop, DropStatement, Edit, Hoist, OpRef, Redefine, Rename, Replace, respelled
from ..safety import SafetyError
from ..scopes import ClassScope, FunctionScope, GlobalScope
from ..sites import Dispatch, Registration, Site, is_string_literal, regs_of
from ..verdicts import Refusal
from .base import Idiom, source
from .contract import Gathered, Settled, rule

Verdicted = Union[Registration, Site]  # what settle gives verdicts to

if TYPE_CHECKING:
    from ..scopes import Scope
    from .contract import Converting, Facts


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
    valid=(source("""
        import tensorflow as tf


        @tf.RegisterGradient("ClipByInput")
        def _clip_by_input(op, grad):
            return grad * tf.cast(tf.abs(op.inputs[0]) <= 1.0, grad.dtype)


        def clipped_identity(x):
            with tf.get_default_graph().gradient_override_map({"Identity": "ClipByInput"}):
                return tf.identity(x)
        """),),
)


# -- decide: gather the registrations, check each, and what their uses ask -------------------------
@rule("gather")
def gather(facts: Facts) -> Gathered:
    """Every registration of the module, each checked alone, and what other modules of the run
    ask of those they use."""
    found = Gathered()
    for reg, missing in find(facts):
        checked = check(facts, reg) if missing is None else GradientChecked(missing)
        elsewhere = use_elsewhere(facts, reg, checked)
        reg = replace(reg, op_refs=checked.op_refs, dropped=list(checked.dropped), uses_output=checked.uses_output,
                      body_names=set(checked.body_names), rename=checked.rename, export=elsewhere.export,
                      maker=elsewhere.maker, maker_name=elsewhere.maker)
        found.registrations.append(reg)
        if elsewhere.refusal is not None:
            found.verdicts.append((reg, elsewhere.refusal))
    return found


@rule("settle")
def settle(facts: Facts) -> Settled:
    """Run until nothing changes: what the uses of each registration ask of it (check_uses); one
    module's blocks using a gradient registered elsewhere stand or fall together (GRL110); a
    name's choices are called alike, so one maker among them makes them all makers."""
    settled = Settled()
    decided: dict[Verdicted, Refusal] = {}  # record -> the Refusal given this round

    def refused(record: Verdicted) -> Refusal | None:
        return record.refusal or decided.get(record)

    def give(record: Verdicted, refusal: Refusal | None) -> None:
        if refusal is not None and not refused(record):
            decided[record] = refusal
            settled.verdicts.append((record, refusal))

    def is_maker(reg: Registration) -> bool:
        return reg.maker or reg in settled.makers

    for reg in facts.registrations:
        if not refused(reg):
            refusal, shape = check_uses(facts, reg, refused)
            give(reg, refusal)
            if shape is not None:
                (settled.makers if shape == "maker" else settled.named).append(reg)
    failed = {t for s in facts.sites if refused(s) for _, t in s.entries if isinstance(t, External)}
    for site in facts.sites:
        hit = next((t for _, t in site.entries if t in failed), None)
        if hit is not None and not refused(site):
            give(site, Refusal.of("GRL110", "other_block_elsewhere", name=hit.spelling,
                                  file=os.path.basename(hit.registered_in)))
    for r in _alike_choices(facts, is_maker):
        if not is_maker(r) and not refused(r):
            refusal = make_maker(facts, r, "it is chosen by a name with another that is")
            give(r, refusal)
            if refusal is None:
                settled.makers.append(r)
    return settled


def _alike_choices(facts: Facts, is_maker: Callable[[Registration], bool]) -> Iterator[Registration]:
    """The choices of each name that chooses a maker among others: called alike, all makers."""
    for site in facts.sites:
        for _, target in site.entries:
            if isinstance(target, Dispatch) and any(is_maker(r) for r in target.choices.values()):
                yield from target.choices.values()


def find(facts: Facts) -> list[tuple[Registration, Refusal | None]]:
    """Every registration of the module, with the refusal of one whose function is not found:
    ``@RegisterGradient(name)`` on a def, and the call forms ``RegisterGradient(name)(fn)`` and
    ``RegisterGradient(name)(factory(...))``."""
    found: list[tuple[Registration, Refusal | None]] = []
    for fdef in facts.defs:
        for dec in fdef.decorators:
            call = dec.decorator
            if isinstance(call, cst.Call) and facts.qn(call.func) & ops.REGISTER_GRADIENT and len(call.args) == 1:
                found.append((Registration(facts.key(call.args[0].value), fdef, "decorator", decorator=dec,
                                           name_expr=call.args[0].value, owner=_owner(facts, fdef)), None))
    for stmt in facts.exprs:
        outer = cst.ensure_type(stmt.body[0], cst.Expr).value  # what facts.exprs holds
        if not (isinstance(outer, cst.Call) and isinstance(outer.func, cst.Call)):
            continue
        inner = outer.func
        if not (facts.qn(inner.func) & ops.REGISTER_GRADIENT and len(inner.args) == 1 and len(outer.args) == 1):
            continue
        name_expr, target = inner.args[0].value, outer.args[0].value
        if isinstance(target, cst.Call) and isinstance(target.func, cst.Name):  # a factory's product
            factory = facts.function_def_for(target.func)
            product = factory_product(facts, factory) if factory is not None else None
            reg = Registration(facts.key(name_expr), product, "factory", name_expr, stmt=stmt, factory_call=target)
        else:
            named = facts.function_def_for(target) if isinstance(target, cst.Name) else None
            reg = Registration(facts.key(name_expr), named, "call", name_expr, stmt=stmt)
        missing = None if reg.fdef is not None else Refusal.of("GRL106", "not_found", registration=code_of(outer))
        found.append((reg, missing))
    return found


def factory_product(facts: Facts, factory: cst.FunctionDef) -> cst.FunctionDef | None:
    """``def make(l): def g(op, grad): ...; return g`` -> g."""
    body = factory.body.body
    if not body or not isinstance(factory.body, cst.IndentedBlock):
        return None
    last = body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)):
        return None
    value = last.body[0].value
    if not isinstance(value, cst.Name):
        return None
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == value.value:
            return stmt
    return None


@dataclass(frozen=True)
class GradientChecked:
    """What ``check`` found of a registration's gradient function: its refusal, or what converting
    it needs (gather makes the registration with them: its fields of the same names)."""
    refusal: Refusal | None = None
    op_refs: dict = field(default_factory=dict)
    dropped: tuple = ()
    uses_output: bool = False
    body_names: frozenset = frozenset()
    rename: bool = False


def check(facts: Facts, reg: Registration) -> GradientChecked:
    """What the function itself allows: the signature (op, grad), one decorator, ``op`` read only
    as ``op.inputs[i]`` / ``op.outputs[0]`` (or whole), TensorFlow names TF2 has, a def name that
    can be kept or renamed."""
    fdef = reg.function
    params = fdef.params
    plain = params.params
    if (len(plain) != 2 or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params
            or params.star_kwarg or params.posonly_params):
        short = len(plain) < 2 and params.star_arg in (None, cst.MaybeSentinel.DEFAULT)  # TF1 fails too
        return GradientChecked(Refusal.of("GRL106", "signature_short" if short else "signature",
                                          function=fdef.name.value))
    if reg.kind == "decorator" and len(fdef.decorators) != 1:
        return GradientChecked(Refusal.of("GRL106", "decorators", function=fdef.name.value))
    op_name = plain[0].name
    fscope = facts.scope(fdef.body.body[0]) if fdef.body.body else None
    if fscope is None:
        return GradientChecked(Refusal.of("GRL106", "unanalysable", function=fdef.name.value))
    op_refs: dict = {}
    dropped: list[cst.SimpleStatementLine] = []
    uses_output = False
    for assignment in fscope.assignments[op_name.value]:
        for access in assignment.references:
            node = access.node
            attr = facts.parent(node)
            sub = facts.parent(attr)
            if (isinstance(attr, cst.Del) and attr.target is node and isinstance(sub, cst.SimpleStatementLine)
                    and len(sub.body) == 1):  # `del op  # unused`: the converted function has no op
                dropped.append(sub)
                continue
            op_attr = attr if isinstance(attr, cst.Attribute) and attr.value is node else None  # `op.<name>`
            indexed = sub if isinstance(sub, cst.Subscript) and sub.value is attr else None  # `op.inputs[i]`
            index = _literal_index(indexed) if indexed is not None else None
            if (op_attr is None or op_attr.attr.value not in ("inputs", "outputs")
                    or (indexed is not None and index is None)
                    or (isinstance(sub, cst.Attribute) and sub.value is attr)):  # `op.inputs.count`
                return GradientChecked(Refusal.of("GRL103", "op_feature", function=fdef.name.value,
                                                  line=facts.pos(node)[0],
                                                  shown=code_of(op_attr) if op_attr is not None else op_name.value))
            kind = "in" if op_attr.attr.value == "inputs" else "out"
            if indexed is None:  # `inputs, bound = op.inputs`: the list of the custom-gradient inputs / outputs
                op_refs[op_attr] = (kind, None)
            elif kind == "out" and index != 0:
                return GradientChecked(Refusal.of("GRL103", "later_output", function=fdef.name.value, index=index))
            else:
                op_refs[indexed] = (kind, index)
            uses_output |= kind == "out"
    body = facts.subtree(fdef.body)
    body_names = frozenset({n.value for n in load_names(fdef.body, body)} | {fdef.name.value, plain[1].name.value})
    refusal = tf2_spelling(facts, reg).refusal
    if refusal is None:
        refusal, rename = check_def_name(facts, reg)
        if refusal is None:
            return GradientChecked(None, op_refs, tuple(dropped), uses_output, body_names, rename)
    return GradientChecked(refusal)


def _literal_index(sub: cst.Subscript) -> int | None:
    """The index of ``op.inputs[i]`` where ``i`` is an integer literal; else None."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    index = sub.slice[0].slice.value
    return int(index.value, 0) if isinstance(index, cst.Integer) else None


def check_def_name(facts: Facts, reg: Registration) -> tuple[Refusal | None, bool]:
    """Two registrations whose functions share one name (``_GuidedReluGrad`` for "GuidedRelu" and
    "DeconvRelu"): TF1 keyed them by registration name, but converted in place the second def
    would shadow the first at every call. Such a function gets a fresh name (``(None, True)``),
    unless the name is also read somewhere (renaming would break that reader): then it is refused."""
    if reg.kind == "factory":
        return None, False
    scope = facts.scope(reg.function)
    if scope is None:
        return Refusal.of("GRL106", "unanalysable", function=reg.function.name.value), False
    bindings = scope.assignments[reg.function.name.value]
    if len(bindings) < 2:
        return None, False
    # a decorated function's name is read by nobody but such readers; the call form reads it itself
    if reg.kind == "decorator":
        readers = [a.node for b in bindings for a in b.references]
    else:
        assert reg.stmt is not None  # a registration of the call form is its statement
        readers = [reg.stmt]
    if readers:
        return Refusal.of("GRL106", "name_shared", function=reg.function.name.value,
                          line=facts.pos(readers[0])[0]), False
    return None, True


@dataclass(frozen=True)
class Spelling:
    """TF2's spelling of the TF1 names and keywords in a gradient function's body (tf2_spelling)."""
    renames: dict  # Attribute in the body -> its TF2 spelling (`tf.neg` -> `tf.negative`)
    keywords: dict  # Arg in the body -> its TF2 keyword (`keep_dims` -> `keepdims`)
    refusal: Refusal | None  # GRL114 where a name or keyword has no TF2 form

    def edits(self) -> list[Edit]:
        return respelled(self.renames, self.keywords)


def tf2_spelling(facts: Facts, reg: Registration) -> Spelling:
    """TF2's spelling of the TF1 names and keywords in a registration's gradient function, found
    once per function for the module. The inline rewrite moves the body; the runtime map keeps it
    (idioms/runtime_map), and asks this also of a registration refused for another reason first."""
    fdef = reg.function
    return facts.memo(("tf2_spelling", fdef), lambda: _spelling(facts, fdef))


def _spelling(facts: Facts, fdef: cst.FunctionDef) -> Spelling:
    renames: dict = {}
    keywords: dict = {}
    refusal = _removed_aliases(facts, fdef, renames) or _keywords(facts, fdef, renames, keywords)
    return Spelling(renames, keywords, refusal)


def _removed_aliases(facts: Facts, fdef: cst.FunctionDef, renames: dict) -> Refusal | None:
    """The body moves into TF2 code verbatim, so every TensorFlow name in it must exist in TF2
    (``tf2_name``; those TF2 spells otherwise go into ``renames``); a name TF2 has in no form
    refuses the registration (GRL114)."""
    for attr in attributes_in(fdef.body, facts.subtree(fdef.body)):
        found = tf2_name(facts, attr)
        if found is None:
            continue
        if isinstance(found, str):
            renames[attr] = found
            continue
        qualified, removed = found
        if removed:
            return Refusal.of("GRL114", "removed", function=fdef.name.value, line=facts.pos(attr)[0],
                              name=code_of(attr))
        return Refusal.of("GRL114", "missing", function=fdef.name.value, line=facts.pos(attr)[0],
                          name=code_of(attr), tf=ops.tf_version(), qualified=qualified)
    return None


def tf2_name(facts: Facts, attr: cst.Attribute) -> str | tuple[str, bool] | None:
    """TF2's spelling of a dotted TensorFlow name: None where TF2 has it as written; else the new
    text: a name TensorFlow removed in 1.0 (``tf.neg``, still in old DANN copies) its TF2 name, an
    underscored wrapper of a hidden op (``gen_nn_ops._relu_grad``) its TF2 name, a TF1-only name
    (``tf.random_uniform``) the ``tf.compat.v1`` one (the very object TF1 had); or, where TF2 has it
    in no form, (the qualified name, whether 1.0 removed it)."""
    found = ops.removed_alias(facts.qn(attr))
    if found is None:
        missing = sorted(q for q in facts.qn(attr, raw=True)
                         if q.startswith("tensorflow.") and not ops.exists_in_tf2(q))
        if not missing:
            return None
        old = ops.tf1_only(missing[0])
        hidden = ops.hidden_op_wrapper(missing[0]) if old is None else None
        if hidden is not None:  # gen_nn_ops._relu_grad -> gen_nn_ops.relu_grad
            return respelled_text(attr, missing[0].rpartition(".")[2], hidden)
        if old is None:
            return missing[0], False
        found = (old, "compat.v1." + old)  # TF1-only (tf.random_uniform): the very object TF1 had
    old, new = found
    if new is None:
        return f"tensorflow.{old}", True
    if any(q.startswith("tensorflow.compat.v1.") for q in facts.qn(attr, raw=True)):
        new = new.removeprefix("compat.v1.")  # the module's `tf` is tensorflow.compat.v1 already
    return respelled_text(attr, old, new)


def _keywords(facts: Facts, fdef: cst.FunctionDef, renames: dict, respelt: dict) -> Refusal | None:
    """Keywords TF2 renamed or dropped in the calls the body makes (``tf.reduce_mean(...,
    keep_dims=True)`` in DoReFa copies): written as TF2 spells them (into ``respelt``), from
    tf_upgrade_v2's own tables; an argument TF2 has no keyword for refuses the registration
    (GRL114). Calls spelled ``tf.compat.v1.X`` (or respelled so, ``renames``) keep TF1's keywords."""
    for call in calls_in(fdef.body, facts.subtree(fdef.body)):
        if call.func in renames or any(
            q.startswith("tensorflow.compat.v1.") for q in facts.qn(call.func, raw=True)
        ):
            continue
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) != sum(1 for a in call.args if a.keyword is None):
            positional = []  # *args: nothing to say about positions
        keywords = [a.keyword.value for a in call.args if a.keyword is not None]
        changes, why = ops.keyword_changes(facts.qn(call.func), len(positional), keywords)
        if why is not None:
            return Refusal.of("GRL114", "keywords", function=fdef.name.value, line=facts.pos(call)[0],
                              callee=code_of(call.func), tf=ops.tf_version(), why=why)
        for i, arg in enumerate(positional):
            if i in changes:
                respelt[arg] = changes[i]
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in changes:
                respelt[arg] = changes[arg.keyword.value]
    return None


def check_uses(facts: Facts, reg: Registration,
               refused: Callable[[Verdicted], Refusal | None]) -> tuple[Refusal | None, str | None]:
    """What the uses of one registration ask of its converted function: (the refusal where one
    plain custom-gradient function cannot serve them all, the shape they ask of it: "maker"
    (``Registration.maker``), "named" (a maker passing ``name=`` on), or None: as it is).
    ``refused(record)``: its refusal so far."""
    users = [s for s in facts.sites if any(reg in regs_of(t) for _, t in s.entries)]
    if any(refused(s) for s in users):
        return Refusal.of("GRL110", "other_block"), None
    entries = [(s, op) for s in users for op, t in s.entries if reg in regs_of(t)]
    op_types = {op.name: op.arity for _, op in entries}
    if len(set(op_types.values())) > 1:
        return Refusal.of("GRL106", "arities", function=reg.function.name.value,
                          ops=", ".join(sorted(op_types))), None
    names = {name_keyword_code(call) for s, op in entries for call, called in s.calls if called.name == op.name}
    passes_name = any(n is not None for n in names)
    literal = all(n is None or is_string_literal(parsed_expression(n)) for n in names)
    why = None
    if not reg.maker:
        if len(op_types) > 1:
            why = f"it is the override gradient of several op types ({', '.join(sorted(op_types))})"
        elif passes_name and (len(names) > 1 or not literal):
            why = "its uses pass `name=` values that differ or are not string literals"
        elif any(isinstance(t, Dispatch) and reg in t.choices.values() for s, _ in entries for _, t in s.entries):
            why = "it is chosen by a name"
    if why is not None:
        refusal = make_maker(facts, reg, why)
        return refusal, None if refusal else "maker"
    if reg.maker and passes_name and not reg.maker_name:
        return None, "named"  # the maker passes each use's `name=` to the op it makes
    return None, None


def make_maker(facts: Facts, reg: Registration, why: str) -> Refusal | None:
    """Whether ``reg`` can be a maker of custom-gradient functions, ``fn(forward, name=...)``:
    None, or the refusal."""
    if operator_use(facts, reg):
        return Refusal.of("GRL108", "operator_unalike", function=reg.function.name.value, why=why)
    if reg.kind == "factory":
        return Refusal.of("GRL106", "factory", function=reg.function.name.value, why=why)
    return None


def operator_use(facts: Facts, reg: Registration) -> bool:
    """Whether a block wraps an operator (``a - b``) with ``reg``'s gradient."""
    for site in facts.sites:
        by_type = {op.name: target for op, target in site.entries}
        if any(isinstance(call, cst.BinaryOperation) and reg in regs_of(by_type[op.name])
               for call, op in site.calls):
            return True
    return False


def _owner(facts: Facts, fdef: cst.FunctionDef) -> str:
    """The class a gradient function registered in its body (``@tf.RegisterGradient`` on a def
    beside the methods) is called through, ``Class.function``: a plain module-level class bound
    once; "" for any other def."""
    fscope = facts.scope(fdef)
    if not isinstance(fscope, ClassScope):
        return ""
    cdef = facts.parent(facts.parent(fdef))  # def -> IndentedBlock -> ClassDef
    if not isinstance(cdef, cst.ClassDef) or cdef.decorators or not isinstance(fscope.parent, GlobalScope):
        return ""
    return cdef.name.value if len(fscope.parent.assignments[cdef.name.value]) == 1 else ""


def reached_through_class(facts: Facts, reg: Registration, here: Scope | None) -> bool:
    """Whether a block in scope ``here`` reaches a registration of a class body through its class
    (``reg.owner``, found when it was gathered): the block is in one of the class's own methods,
    and no scope between the method and the module rebinds the class's name."""
    if reg.kind != "decorator" or not reg.owner:
        return False
    fscope = facts.scope(reg.fdef)
    if fscope is None:
        return False
    cname = reg.owner
    chain, scope = [], here
    while scope is not None and scope is not fscope.parent:
        chain.append(scope)
        scope = scope.parent
    if len(chain) < 2 or chain[-1] is not fscope or not isinstance(chain[-2], FunctionScope):
        return False  # the block is not inside a method of this class
    return not any(cname in s.assignments for s in chain[:-1] if not isinstance(s, ClassScope))


@dataclass(frozen=True)
class Elsewhere:
    """What other modules of the run ask of a registration (use_elsewhere)."""
    refusal: Refusal | None  # its refusal: the one it had already, or the one their uses give it
    export: Export | None = None  # the uses elsewhere
    maker: bool = False  # converted to a maker that takes `name=`, whatever its local uses


def use_elsewhere(facts: Facts, reg: Registration, checked: GradientChecked) -> Elsewhere:
    """A registration other modules of the run use (facts.Export): converted to a maker whatever
    its local uses, or kept (with every local use) when a use elsewhere is not migrated.
    ``checked``: what ``check`` found (its refusal, where it has one, stands)."""
    refusal = checked.refusal
    exports = {e.function: e for e in facts.links.exports}
    if not exports or reg.fdef is None:  # a call registration whose function was not found: refused already
        return Elsewhere(refusal)
    export = exports.get(reg.function.name.value)
    if export is None or not isinstance(facts.scope(reg.function), GlobalScope):
        return Elsewhere(refusal)
    if export.refusal:
        return Elsewhere(refusal or Refusal.of("GRL110", "kept", name=code_of(reg.name_expr),
                                               **export.refusal.passed_on()), export)
    if reg.kind == "factory" or checked.rename:
        return Elsewhere(refusal or Refusal.of("GRL106", "exported_renamed", function=reg.function.name.value,
                                               users=", ".join(export.used_in)), export)
    return Elsewhere(refusal, export, maker=True)


@rule("finish")
def finish(facts: Facts) -> list[Diagnostic]:
    """Once the blocks are decided: a registration no block of this module (or, in a run over a
    tree, of the modules linked to it) uses is kept as it is: other modules may use it. Said
    once, as a note."""
    said = []
    for reg in facts.registrations:
        if reg.export is not None:
            continue
        spelled = code_of(reg.name_expr)
        value = reg.name_key[1] if reg.name_key and reg.name_key[0] == "str" else None
        if any(reg in regs_of(t) for s in facts.sites for _, t in s.entries) or any(
                spelled in code_of(s.item) for s in facts.sites) or value is None or facts.source.count(value) > 1:
            continue  # used, maybe: only a name mentioned nowhere else is noted
        anchor = reg.decorator if reg.kind == "decorator" else reg.stmt
        said.append(Diagnostic.said(facts.pos(anchor or reg.function), "GRL202", "unused", name=spelled))
    return said


# -- emit -------------------------------------------------------------------------------------------
@rule("convert_registration")
def convert_registration(builder: Converting, reg: Registration, calls: list[cst.Call]) -> list[Edit]:
    """Every registration a reversal rule did not take: converted, its op calls pointed at it."""
    name = builder.called_as(reg)
    edits = emit(builder, reg)
    if not reg.maker:  # a maker's calls are chosen later (each call picks its function)
        edits += builder.pointing(calls, name)
    return edits


def emit(builder: Converting, reg: Registration) -> list[Edit]:
    """The registration's function becomes the custom-gradient function (or its maker) in place:
    same body, ``op.inputs`` / ``op.outputs`` mapped; the registration itself (decorator, call
    statement, a guard around it, a factory's name argument) goes."""
    fdef = reg.function
    conversion = builder.conversion(reg)
    used = set(reg.body_names)
    inputs = [fresh_name(n, used) for n in input_names(conversion.arity)]
    output = fresh_name("y", used) if reg.uses_output else None
    grad_fn = fresh_name("grad_fn", used)
    edits: list[Edit] = [DropStatement(line) for line in reg.dropped]
    outputs = [output] if output is not None else []  # named where the body reads op.outputs (uses_output)
    for sub, (kind, index) in reg.op_refs.items():
        names = inputs if kind == "in" else outputs
        if index is None:  # the whole op.inputs / op.outputs
            edits.append(Rename(sub, f"[{', '.join(names)}]"))
        elif index < len(names):
            edits.append(OpRef(sub, names[index]))
        else:
            raise SafetyError(f"op.{'inputs' if kind == 'in' else 'outputs'}[{index}] of a {conversion.arity}-input op")
    grad_param = fdef.params.params[1].name.value
    defined = builder.callable_name(reg) if reg.rename else fdef.name.value
    if reg.maker:  # def f(forward, name=None): @custom_gradient def wrapped(a, b): ...; return wrapped
        forward_p = fresh_name("forward", used)
        name_p = fresh_name("name", used) if reg.maker_name else None
        keyword = f", name={name_p}" if name_p else ""
        forward = f"{forward_p}({', '.join(inputs)}{keyword})"
        wrapped = fresh_name("wrapped", used)
        head = (f"def {defined}({forward_p}{f', {name_p}=None' if name_p else ''}):\n"
                f"    @{builder.tf}.custom_gradient\n    def {wrapped}({', '.join(inputs)}):\n")
        foot = f"    return {wrapped}\n"
    else:
        keyword = "" if conversion.name_keyword is None else f", name={conversion.name_keyword}"
        if isinstance(conversion.forward, cst.BaseBinaryOp):  # `a - b`: the same operator makes the op
            forward = f"{inputs[0]}{code_of(conversion.forward)}{inputs[1]}"
        elif conversion.forward is not None:
            forward = f"{builder.spelled(conversion.forward)}({', '.join(inputs)}{keyword})"
        else:  # a registration only other modules call is converted to a maker (export_of)
            raise SafetyError(f"no call in this module creates the op {defined} overrides")
        head = f"@{builder.tf}.custom_gradient\ndef {defined}({', '.join(inputs)}):\n"
        foot = ""
    if output:
        tail = (f"    {output} = {forward}\n    def {grad_fn}({grad_param}):\n        pass\n"
                f"    return {output}, {grad_fn}\n")
    else:
        tail = f"    def {grad_fn}({grad_param}):\n        pass\n    return {forward}, {grad_fn}\n"
    if reg.maker:
        tail = textwrap.indent(tail, "    ")
    template = cst.ensure_type(parsed_statement(head + tail + foot), cst.FunctionDef)
    inner_index = 1 if output else 0

    def build(updated: cst.FunctionDef) -> cst.FunctionDef:
        outer: Any = template.body  # the generated def's block (libcst's suites, typed loosely)
        block = outer.body[0].body if reg.maker else outer
        inner = block.body[inner_index].with_changes(body=updated.body)
        block = block.with_changes(body=[*block.body[:inner_index], inner, *block.body[inner_index + 1:]])
        if reg.maker:
            block = outer.with_changes(body=[outer.body[0].with_changes(body=block), *outer.body[1:]])
        return template.with_changes(body=block, leading_lines=updated.leading_lines,
                                     lines_after_decorators=updated.lines_after_decorators)

    edits += [Redefine(fdef, build), *tf2_spelling(builder.facts, reg).edits()]
    if reg.kind == "decorator":
        edits += [Drop(reg.decorator), *hoist_guard(builder, reg)]
    elif reg.kind == "call":
        edits.append(DropStatement(cst.ensure_type(reg.stmt, cst.SimpleStatementLine)))
    else:
        stmt = cst.ensure_type(reg.stmt, cst.SimpleStatementLine)
        factory_call = code_of(cst.ensure_type(reg.factory_call, cst.Call))
        assign = parsed_statement(f"{builder.callable_name(reg)} = {factory_call}\n")
        edits += [Drop(reg.name_expr), Replace(stmt, assign.with_changes(leading_lines=stmt.leading_lines))]
    return edits


def hoist_guard(builder: Converting, reg: Registration) -> list[Edit]:
    """``if name not in registered: @RegisterGradient(name) ...; registered.add(name)`` -> the body."""
    block = builder.facts.parent(reg.fdef)
    guard = builder.facts.parent(block)
    if not (isinstance(guard, cst.If) and guard.orelse is None and isinstance(guard.test, cst.Comparison)):
        return []
    test = guard.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.NotIn):
        return []
    if builder.facts.key(test.left) != reg.name_key:
        return []
    registry = code_of(test.comparisons[0].comparator)
    edits: list[Edit] = [Hoist(guard), Drop(test)]
    for stmt in guard.body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
            call = stmt.body[0].value
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and code_of(call.func.value) == registry and call.func.attr.value in ("add", "append")):
                edits.append(DropStatement(stmt))
    return edits
