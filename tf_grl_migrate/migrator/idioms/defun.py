"""TF1's other gradient override: ``function.Defun(..., python_grad_func=g)`` or ``grad_func=G``
(decorator or call form) becomes a ``@tf.custom_gradient`` function of the same name and
parameters; the Defun's body stays, renamed as its forward. A Defun with no gradient of its own
is noted (TF2 gives it no gradient in a tf.function) and left as it is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import libcst as cst

from ...report import Diagnostic
from .. import precheck
from ..nodes import code_of, fresh_name, is_plain, load_names, parsed_statement
from ..plan import Drop, Edit, Keep, Recall, Redefine, Replace
from ..scopes import GlobalScope
from ..verdicts import Refusal
from .base import Idiom, source
from .contract import Gathered, rule

if TYPE_CHECKING:
    from .contract import Converting, Facts


_GRAD = '''
    def _grad(op, dy):
        return dy * %s

'''

IDIOM = Idiom(
    name="defun",
    summary="function.Defun with python_grad_func= or grad_func=: a @tf.custom_gradient function",
    codes=("GRL115", "GRL205", "GRL206"),
    examples={
        "GRL115": source("""
            import tensorflow as tf
            from tensorflow.python.framework import function

            """, _GRAD % "op.get_attr('T')", """
            @function.Defun(tf.float32, python_grad_func=_grad)
            def scaled(x):
                return x * 2.0
            """),
        "GRL205": source("""
            import tensorflow as tf
            from tensorflow.python.framework import function


            @function.Defun(tf.float32)
            def double(x):
                return x * 2.0
            """),
        "GRL206": source("""
            import tensorflow as tf
            from tensorflow.python.framework import function

            """, _GRAD % "-1.0", """
            @function.Defun(tf.float32, python_grad_func=_grad, func_name="Flip")
            def flip(x):
                return tf.identity(x)
            """),
    },
    cases=("defun_python_grad_func", "defun_lambda_gradient_and_shape_func", "defun_grad_func_defun",
           "defun_several_inputs_and_an_int", "defun_call_form_in_a_function", "defun_reads_op_outputs",
           "defun_gradient_uses_tf1_only_names", "defun_integer_input_nothing_passes", "defun_called_with_a_name"),
    valid=(source("""
        import tensorflow as tf
        from tensorflow.python.framework import function


        @function.Defun(tf.float32, python_grad_func=lambda op, dy: dy * 0.5)
        def halve_gradient(x):
            return tf.identity(x)
        """),),
)

DEFUN = frozenset({"tensorflow.python.framework.function.Defun"})
# the keywords a migrated Defun drops, and why TF2 has no use for them
DROPPED = {
    "func_name": "the graph function's name (TF2 makes no graph function of it)",
    "noinline": "an inlining hint for the graph function",
    "shape_func": "static output shapes (TF2 knows them from the ops, eagerly and in a tf.function)",
    "out_names": "the graph function's output names",
    "compiled": "XLA compilation of the graph function (in TF2: tf.function(jit_compile=True))",
    "separate_compiled_gradients": "XLA compilation of its gradient apart",
}
_GRADIENTS = ("python_grad_func", "grad_func")


@dataclass(eq=False)
class DefunSite:
    """One ``Defun(...)`` call: as a decorator of ``fdef``, or applied to ``wrapped`` in
    ``target = Defun(...)(wrapped)`` (``stmt``)."""

    call: cst.Call
    fdef: cst.FunctionDef | None = None  # the decorated def
    stmt: cst.SimpleStatementLine | None = None  # call form: `target = Defun(...)(wrapped)`
    target: str = ""
    wrapped: cst.BaseExpression | None = None
    wrapped_def: cst.FunctionDef | None = None  # the def `wrapped` names, where it names one
    gradient: cst.BaseExpression | None = None  # python_grad_func's value
    gradient_def: cst.FunctionDef | None = None  # the def python_grad_func names, where it names one
    grad_defun: DefunSite | None = None  # grad_func's Defun
    reads_op: set[str] = field(default_factory=set)  # "inputs", "outputs": what the gradient reads of op
    dropped: list[str] = field(default_factory=list)  # the keywords TF2 has no use for (DROPPED)
    shown: str = ""  # what a Defun without a gradient makes, as its note names it (where _name cannot)
    named_calls: list = field(default_factory=list)  # calls of the function passing `name=` (dropped)
    gradient_of: DefunSite | None = None  # this Defun is another's grad_func
    refusal: Refusal | None = None
    anchor: cst.CSTNode | None = None  # where a Defun taken as a value is named
    provable: bool = True  # the callee is provably tensorflow.python.framework.function.Defun

    def runs(self) -> list:
        """The code the migrated function runs (its forward, its gradient), which must run under TF2;
        none for a Defun that is kept (no gradient of its own) or is another's grad_func."""
        if self.gradient is None and self.grad_defun is None:
            return []
        grad_def = self.grad_defun.fdef if self.grad_defun is not None else None
        found = (self.fdef or self.wrapped_def, self.gradient_def or self.gradient, grad_def)
        return [node for node in found if node is not None]


@rule("gather")
def gather(facts: Facts) -> Gathered:
    """Every ``Defun`` of the module: each call found, then its form and its gradient checked."""
    found = Gathered()
    if precheck.DEFUN not in facts.source:
        return found  # each Defun is found as a node named `Defun`: one the text never writes is none
    sites = _placed_calls(facts, found)
    by_def = {id(s.fdef): s for s, _ in sites if s.fdef is not None}
    gradient_of: dict[DefunSite, DefunSite] = {}  # a Defun another's grad_func names -> that other
    for site, _ in sites:
        other = _grad_func_defun(facts, site, by_def)
        if other is not None:
            gradient_of[other] = site
    for site, refusal in sites:  # each record filled from what its checks found, before it is handed on
        found.own.append(site)
        site.gradient_of = gradient_of.get(site)
        if site.gradient_of is None and not any(a.star == "**" or (a.keyword is not None and a.keyword.value in
                                                                   _GRADIENTS) for a in site.call.args):
            site.shown = _made_name(facts, site)
            continue  # no gradient of its own, so no override, whatever its form: kept with a note (finish)
        if refusal is None:
            refusal, given = _arguments(facts, site, by_def)
            site.dropped, site.grad_defun, site.gradient, site.gradient_def, site.reads_op = (
                list(given.dropped), given.grad_defun, given.gradient, given.gradient_def, set(given.reads_op))
        if refusal is None:
            refusal, site.named_calls = _keyword_calls(facts, site)
        if refusal is not None:
            found.verdicts.append((site, refusal))
    for site, _ in sites:  # a grad_func's Defun stands or falls with the Defun that uses it
        other = site.gradient_of
        if other is not None and not _refused(found, site) and _refused(found, other):
            found.verdicts.append((site, Refusal.of("GRL115", "grad_func_refused", name=_name(other))))
    return found


def _placed_calls(facts: Facts, found: Gathered) -> list[tuple[DefunSite, Refusal | None]]:
    """Each call of a ``Defun``, placed, with its form's refusal; a ``Defun`` taken as a value goes
    straight into ``found`` with its refusal (GRL115)."""
    sites: list[tuple[DefunSite, Refusal | None]] = []  # each placed, with its form's refusal
    for node in facts.of_type(cst.Attribute, cst.Name):
        if not ((isinstance(node, cst.Attribute) and node.attr.value == "Defun")
                or (isinstance(node, cst.Name) and node.value == "Defun")) or _in_import(facts, node):
            continue
        parent = facts.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            continue  # `function.Defun` is one node: its Attribute, not its `function`
        if not facts.qn(node) & DEFUN and not (isinstance(parent, cst.Call) and parent.func is node):
            continue  # another `Defun`, not called: nothing to say
        if not (isinstance(parent, cst.Call) and parent.func is node):
            site = DefunSite(cst.Call(func=node), anchor=node)
            found.own.append(site)
            taken = Refusal.of("GRL115", "taken_as_value", name=code_of(node), line=facts.pos(node)[0])
            found.verdicts.append((site, taken))
            continue
        # `tf.Defun` of `lingvo.compat`, say: TensorFlow's, most likely, but not provably
        site, refusal = _placed(facts, parent, provable=bool(facts.qn(node) & DEFUN))
        sites.append((site, refusal))
    return sites


def _made_name(facts: Facts, site: DefunSite) -> str:
    """What a Defun the tool does not convert makes, for its note: the def it decorates, the name
    ``Defun(...)(f)`` is bound to, else the Defun call itself."""
    parent = facts.parent(site.call)
    if isinstance(parent, cst.Decorator) and isinstance(owner := facts.parent(parent), (cst.FunctionDef, cst.ClassDef)):
        return owner.name.value
    assign = facts.parent(parent) if isinstance(parent, cst.Call) and parent.func is site.call else None
    if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
        return code_of(assign.targets[0].target)
    return f"{code_of(site.call.func)}(...)"


def _keyword_calls(facts: Facts, site: DefunSite) -> tuple[Refusal | None, list[cst.Call]]:
    """The calls of the function that pass ``name=`` (a TF1 Defun named its op so; the migrated
    function takes its inputs only, so the keyword goes), or the refusal for a call passing another
    keyword, ``**``, a name computed by a call, or one that may call another function of that name."""
    name = _name(site)
    module_level = isinstance(facts.parent(site.fdef if site.fdef is not None else site.stmt), cst.Module)
    elsewhere = [c for c in facts.links.foreign_uses if c.function == name] if module_level else []
    if elsewhere:  # another module's use: the rewrite of this one cannot change it
        use = elsewhere[0]
        if use.attribute:
            return Refusal.of("GRL115", "attribute_read_elsewhere", where=use.where, attribute=use.shown), []
        return Refusal.of("GRL115", "call_keywords_elsewhere", name=name, shown=use.shown, where=use.where), []
    found = []
    for call in facts.of_type(cst.Call):
        if not (isinstance(call.func, cst.Name) and call.func.value == name):
            continue
        refs = facts.referents(call.func)
        ours = [_binds(facts, ref, site) for ref in refs]
        if not any(ours):
            continue
        keywords = [a for a in call.args if a.keyword is not None or a.star == "**"]
        if not keywords:
            continue
        line = facts.pos(call)[0]
        odd = next((a for a in keywords if a.keyword is None or a.keyword.value != "name" or not is_plain(a.value)),
                   None)
        if odd is not None or not all(ours):
            shown = _keyword_shown(odd if odd is not None else keywords[0])
            return Refusal.of("GRL115", "call_keywords", line=line, shown=shown), []
        found.append(call)
    return None, found


def _keyword_shown(arg: cst.Arg) -> str:
    return f"{arg.keyword.value}={code_of(arg.value)}" if arg.keyword is not None else "**"


def _binds(facts: Facts, ref: Any, site: DefunSite) -> bool:
    """Whether the binding ``ref`` is the Defun's function: its def, or ``target = Defun(...)(f)``."""
    if site.fdef is not None:
        return getattr(ref, "node", None) is site.fdef
    found = facts.simple_assign_value(ref)
    return found is not None and found[0] is site.stmt


def _in_import(facts: Facts, node: cst.CSTNode | None) -> bool:
    while node is not None and not isinstance(node, cst.BaseSmallStatement):
        node = facts.parent(node)
    return isinstance(node, (cst.Import, cst.ImportFrom))


def _refused(found: Gathered, site: DefunSite) -> bool:
    return site.refusal is not None or any(record is site for record, _ in found.verdicts)


def _name(site: DefunSite) -> str:
    return site.fdef.name.value if site.fdef is not None else site.target


def _placed(facts: Facts, call: cst.Call, provable: bool) -> tuple[DefunSite, Refusal | None]:
    """The form of the call: a decorator, ``target = Defun(...)(f)``, or one the tool refuses
    (with its refusal). ``provable``: the callee is provably TensorFlow's Defun."""
    parent = facts.parent(call)
    if any(isinstance(n, (cst.For, cst.While, cst.CompFor)) for n in _ancestors(facts, call)):
        return DefunSite(call, provable=provable), Refusal.of("GRL115", "in_loop")
    if isinstance(parent, cst.Decorator):
        fdef = facts.parent(parent)
        if not isinstance(fdef, cst.FunctionDef):
            return DefunSite(call, provable=provable), Refusal.of("GRL115", "decorates_class")
        site = DefunSite(call, fdef=fdef, provable=provable)
        if len(fdef.decorators) != 1:
            return site, Refusal.of("GRL115", "decorators", function=fdef.name.value)
        return site, None
    applied = parent if isinstance(parent, cst.Call) and parent.func is call else None
    assign = facts.parent(applied) if applied is not None else None
    stmt = facts.parent(assign) if isinstance(assign, cst.Assign) else None
    if not (applied is not None and len(applied.args) == 1 and not applied.args[0].keyword
            and not applied.args[0].star and isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1):
        return DefunSite(call, provable=provable), Refusal.of("GRL115", "other_use", line=facts.pos(call)[0])
    target, wrapped = assign.targets[0].target.value, applied.args[0].value
    wrapped_def = facts.function_def_for(wrapped) if isinstance(wrapped, cst.Name) else None
    site = DefunSite(call, stmt=stmt, target=target, wrapped=wrapped, wrapped_def=wrapped_def, provable=provable)
    if not isinstance(wrapped, cst.Name):
        return site, Refusal.of("GRL115", "wraps_expression", wrapped=code_of(wrapped))
    if wrapped.value == target:
        return site, Refusal.of("GRL115", "rebinds", name=target)
    if wrapped_def is None and len(facts.referents(wrapped)) != 1:
        return site, Refusal.of("GRL115", "bound_twice", name=wrapped.value)
    return site, None


def _ancestors(facts: Facts, start: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes around ``start`` up to the def it runs in (a decorator runs outside its own def)."""
    node = facts.parent(start)
    if isinstance(node, cst.Decorator):
        node = facts.parent(facts.parent(node))
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Lambda)):
        yield node
        node = facts.parent(node)


@dataclass(frozen=True)
class _Given:
    """What a Defun's own arguments give its migration (_arguments): gather puts them into its
    site's fields of the same names."""
    dropped: tuple[str, ...] = ()
    grad_defun: DefunSite | None = None
    gradient: cst.BaseExpression | None = None
    gradient_def: cst.FunctionDef | None = None
    reads_op: frozenset[str] = frozenset()


def _arguments(facts: Facts, site: DefunSite, by_def: dict[int, DefunSite]) -> tuple[Refusal | None, _Given]:
    """The Defun's own arguments: input types (dropped), a gradient, and keywords TF2 has no use
    for. Their refusal, and what they give."""
    gradients = [a for a in site.call.args if a.keyword is not None and a.keyword.value in _GRADIENTS]
    for arg in site.call.args:
        if arg.star == "**":
            return Refusal.of("GRL115", "star_keywords"), _Given()
        if arg.keyword is not None and arg.keyword.value not in DROPPED and arg.keyword.value not in _GRADIENTS:
            return Refusal.of("GRL115", "unknown_keyword", keyword=arg.keyword.value), _Given()
    given = _Given(tuple(a.keyword.value for a in site.call.args if a.keyword is not None
                         and a.keyword.value in DROPPED))
    params = _params(site)
    if isinstance(params, Refusal):
        return params, given
    if not gradients:
        return None, given  # no gradient of its own: a note (finish), or another Defun's grad_func
    if not site.provable:
        shown = code_of(site.call.func)
        origin = ", ".join(sorted(facts.qn(site.call.func))) or "a name the tool cannot resolve"
        return Refusal.of("GRL115", "not_provable", shown=shown, origin=origin), given
    if len(gradients) > 1:
        return Refusal.of("GRL115", "both_gradients"), given
    arg = gradients[0]
    reads = _attribute_reads(facts, site)
    if reads is not None:
        return reads, given
    if arg.keyword is not None and arg.keyword.value == "grad_func":
        other = _grad_func_defun(facts, site, by_def)
        if other is None or any(a.keyword is not None and a.keyword.value in _GRADIENTS for a in other.call.args):
            return Refusal.of("GRL115", "grad_func", grad_func=code_of(arg.value)), given
        return None, replace(given, grad_defun=other)
    return _gradient(facts, replace(given, gradient=arg.value), arg.value)


def _grad_func_defun(facts: Facts, site: DefunSite, by_def: dict[int, DefunSite]) -> DefunSite | None:
    """The Defun of this module ``grad_func=`` names, where it names one."""
    arg = next((a for a in site.call.args if a.keyword is not None and a.keyword.value == "grad_func"), None)
    if arg is None or not isinstance(arg.value, cst.Name):
        return None
    grad = facts.function_def_for(arg.value)
    return by_def.get(id(grad)) if grad is not None else None


def _params(site: DefunSite) -> Refusal | None:
    """The parameters the custom-gradient function takes (those of the Defun's function), or the refusal."""
    fdef = site.fdef or site.wrapped_def
    if fdef is None:
        return None  # a callable held in a name: called with the same positional arguments
    params = fdef.params
    if params.kwonly_params or params.star_kwarg is not None or params.posonly_params or any(
            p.default is not None for p in params.params):
        return Refusal.of("GRL115", "parameters", function=fdef.name.value)
    return None


def _attribute_reads(facts: Facts, site: DefunSite) -> Refusal | None:
    """A Defun's function is TF1's function object: code that reads its attributes (``f.name``,
    ``f.add_to_graph(g)``) would find a plain function after the migration."""
    name = site.fdef.name if site.fdef is not None else None
    scope = facts.scope(site.fdef) if site.fdef is not None else facts.scope(site.stmt)
    if scope is None:
        return None
    wanted = name.value if name is not None else site.target
    for binding in scope.assignments[wanted]:
        for access in binding.references:
            parent = facts.parent(access.node)
            if isinstance(parent, cst.Attribute) and parent.value is access.node:
                return Refusal.of("GRL115", "attribute_read", line=facts.pos(parent)[0], attribute=code_of(parent))
    return None


def _gradient(facts: Facts, given: _Given, value: cst.BaseExpression) -> tuple[Refusal | None, _Given]:
    """A python_grad_func the tool can call from a custom gradient: a lambda, or a def the
    module binds once, taking ``(op, *grads)`` and reading of ``op`` only ``op.inputs`` and
    ``op.outputs`` (whole or indexed). Its refusal, and ``given`` with what it found."""
    function = None  # the gradient def's name; None: a lambda
    if isinstance(value, cst.Lambda):
        params, body_scope = value.params, facts.scope(value.body)
    elif isinstance(value, cst.Name) and (fdef := facts.function_def_for(value)) is not None:
        if fdef.decorators:
            return Refusal.of("GRL115", "gradient_decorated", function=fdef.name.value), given
        given = replace(given, gradient_def=fdef)
        params, body_scope = fdef.params, facts.scope(fdef.body.body[0]) if fdef.body.body else None
        function = fdef.name.value
    elif _imported(facts, value):
        return _imported_gradient(facts, given, value)
    else:
        return Refusal.of("GRL115", "gradient_chosen", gradient=code_of(value)), given
    if not params.params or params.star_kwarg is not None or params.kwonly_params or params.posonly_params:
        return (Refusal.of("GRL115", "lambda_signature") if function is None else
                Refusal.of("GRL115", "gradient_signature", function=function)), given
    op = params.params[0].name.value
    if body_scope is None:
        return None, given
    reads: set[str] = set()
    for binding in body_scope.assignments[op]:
        for access in binding.references:
            attr = facts.parent(access.node)
            if isinstance(attr, cst.Attribute) and attr.value is access.node and attr.attr.value in ("inputs",
                                                                                                  "outputs"):
                reads.add(attr.attr.value)
                continue
            if isinstance(attr, cst.Del):
                continue
            shown = code_of(attr) if isinstance(attr, cst.Attribute) else op
            line = facts.pos(access.node)[0]
            return (Refusal.of("GRL115", "lambda_op_use", line=line, shown=shown) if function is None else
                    Refusal.of("GRL115", "gradient_op_use", function=function, line=line, shown=shown)), given
    return None, replace(given, reads_op=frozenset(reads))


def _imported_gradient(facts: Facts, given: _Given, value: cst.BaseExpression) -> tuple[Refusal | None, _Given]:
    """A gradient another module of the run defines: what it reads of ``op`` was read there
    (facts.Run); one from outside the run is not followed."""
    shown = code_of(value)
    found = next((g for g in facts.links.gradients if g.spelling == shown), None)
    if found is None:
        return Refusal.of("GRL115", "outside_run", gradient=shown), given
    if found.refusal:
        return Refusal.of("GRL115", "imported_refused", gradient=shown, file=os.path.basename(found.defined_in),
                          why=found.refusal), given
    return None, replace(given, reads_op=frozenset(found.reads))


def _imported(facts: Facts, value: cst.BaseExpression) -> bool:
    """Whether ``value`` names (or is an attribute of) a name an import binds."""
    while isinstance(value, cst.Attribute):
        value = value.value
    if not isinstance(value, cst.Name):
        return False
    return any(isinstance(getattr(r, "node", None), (cst.Import, cst.ImportFrom)) for r in facts.referents(value))


@rule("finish")
def finish(facts: Facts) -> list[Diagnostic]:
    """Each refused Defun's diagnostic; a note for each Defun without a gradient (TF2 runs it
    rightly only in a tf.compat.v1 graph) and for what a migrated one dropped."""
    said = []
    for site in facts.own("defun"):
        assert isinstance(site, DefunSite)  # the records this idiom gathered
        where = facts.pos(site.anchor or site.call)
        if site.refusal is not None:
            said.append(site.refusal.diagnostic(where))
        elif site.gradient is None and site.grad_defun is None and site.gradient_of is None:
            said.append(Diagnostic.said(where, "GRL205", "no_gradient", name=site.shown or _name(site)))
        elif site.gradient_of is None:
            dropped = ["the declared input types (TF2 takes the inputs' own dtypes; pass tensors of the declared "
                       "types)"] + [f"{k}= ({DROPPED[k]})" for k in site.dropped]
            shown = ", ".join(["its input types", *(f"{k}=" for k in site.dropped)])
            if site.named_calls:
                lines = ", ".join(str(facts.pos(c)[0]) for c in site.named_calls)
                dropped.append(f"name= at its calls (line {lines}): it named TF1's function-call op")
                shown += ", name= at its calls"
            said.append(Diagnostic.said(where, "GRL206", "converted", name=_name(site), shown=shown,
                                        dropped="; ".join(dropped)))
    return said


# -- convert ------------------------------------------------------------------------------------
@rule("convert_own")
def convert_own(builder: Converting, records: list[Any]) -> list[Edit]:
    """Each migrated Defun (its grad_func's Defun loses its decorator too)."""
    edits: list[Edit] = []
    for site in records:
        if site.gradient_of is not None:
            continue
        if site.gradient is None and site.grad_defun is None:
            continue  # a Defun without a gradient: noted, kept
        edits += _emit(builder, site)
    return edits


def _emit(builder: Converting, site: DefunSite) -> list[Edit]:
    edits: list[Edit] = [Drop(site.call)]
    edits += [Recall(call, _without_name) for call in site.named_calls]
    # the generated code reads these: their names stay bound
    edits += [Keep(node) for node in (site.gradient, site.wrapped) if node is not None]
    if site.grad_defun is not None:
        other = site.grad_defun
        edits.append(Drop(other.call))
        if other.fdef is not None:
            edits.append(Redefine(other.fdef, lambda updated: updated.with_changes(decorators=())))
    fdef = site.fdef or site.wrapped_def
    name = _name(site)
    forward = code_of(site.wrapped) if site.wrapped is not None else fresh_name(f"_{name}_forward", builder.taken)
    # the generated function's own names: none may hide a parameter or a name its code reads
    used = {forward.split(".")[0], builder.tf, *(n.value for n in load_names(site.gradient or cst.Name("_")))}
    if site.grad_defun is not None:
        used.add(_name(site.grad_defun))
    if fdef is not None:
        used |= {p.name.value for p in (*fdef.params.params, *_star(fdef.params))}
        params = code_of(fdef.params).strip()
    else:
        params = f"*{fresh_name('args', used)}"
    names = _call_arguments(fdef, params)
    inputs = f"[{names}]"  # TF1's op.inputs: every argument, in order
    out, grad, dys, op = (fresh_name(n, used) for n in ("outputs", "grad", "dys", "op"))
    lines = []
    if site.grad_defun is not None:
        lines.append(f"return {_name(site.grad_defun)}({names + ', ' if names else ''}*{dys})")
    elif site.gradient is not None:
        gradient = code_of(site.gradient)
        gradient = f"({gradient})" if isinstance(site.gradient, cst.Lambda) else gradient
        if site.reads_op:
            parts = [f"inputs={inputs}"]
            if "outputs" in site.reads_op:
                parts.append(f"outputs=list({out}) if isinstance({out}, (list, tuple)) else [{out}]")
            lines.append(f"{op} = {builder.import_module('types')}.SimpleNamespace({', '.join(parts)})")
        lines.append(f"return {gradient}({op if site.reads_op else 'None'}, *{dys})")
    body = "".join(f"        {line}\n" for line in lines)
    text = (f"@{builder.tf}.custom_gradient\ndef {name}({params}):\n    {out} = {forward}({names})\n\n"
            f"    def {grad}(*{dys}):\n{body}\n    return {out}, {grad}\n")
    generated = parsed_statement(text)
    if site.fdef is not None:
        at_module = isinstance(builder.facts.scope(site.fdef), GlobalScope)
        gap = (cst.EmptyLine(indent=False),) * (2 if at_module else 1)

        def build(updated: cst.FunctionDef) -> cst.FlattenSentinel[cst.BaseStatement]:
            kept = updated.with_changes(name=cst.Name(forward), decorators=(),
                                        lines_after_decorators=())
            return cst.FlattenSentinel([kept, generated.with_changes(leading_lines=gap)])

        edits.append(Redefine(site.fdef, build))
    elif site.stmt is not None:
        edits.append(Replace(site.stmt, generated.with_changes(leading_lines=site.stmt.leading_lines)))
    return edits


def _without_name(updated: cst.Call) -> cst.Call:
    """A call of a migrated Defun without its ``name=`` (the last argument left keeps no comma)."""
    args = [a for a in updated.args if not (a.keyword is not None and a.keyword.value == "name")]
    if args and updated.args[-1] is not args[-1]:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return updated.with_changes(args=args)


def _star(params: cst.Parameters) -> list:
    return [params.star_arg] if isinstance(params.star_arg, cst.Param) else []


def _call_arguments(fdef: cst.FunctionDef | None, params: str) -> str:
    """The custom-gradient function's parameters passed on, as written."""
    if fdef is None:
        return params
    return ", ".join([*(p.name.value for p in fdef.params.params), *(f"*{p.name.value}" for p in _star(fdef.params))])

