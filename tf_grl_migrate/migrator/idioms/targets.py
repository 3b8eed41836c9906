"""What an override map's target means: one gradient registration of this module (matched by
its name's value, or by the binding a name reads), one of another module of the run (facts.py's
links), a gradient TensorFlow provides, or a choice among this module's registrations by the
string literals a name can hold where the block reads it (a ``Dispatch``), and GRL102 when none
of these can be told. Asked by the override block's check (``override_block.check_site``) and
the runtime map; every answer reads the module's facts (``facts``: analysis.RuleFacts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Union

import libcst as cst

from ...knowledge import ops
from ..nodes import code_of, string_value
from ..scopes import Assignment, FunctionScope, GlobalScope, ImportAssignment
from ..sites import Dispatch
from ..verdicts import Hint, Refusal

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..facts import External
    from ..scopes import BaseAssignment
    from ..sites import Registration
    from .contract import Facts

    Meaning = Union[Registration, Dispatch, External, ops.BuiltinGradient, Refusal]  # what a target means


class Reason(NamedTuple):
    """Why a target's values cannot be told, and the hints that go with it (``Refusal.hints``)."""

    text: str
    hints: tuple[Hint, ...] = ()


def match_target(facts: Facts, value: cst.BaseExpression) -> Meaning:
    """What the map target ``value`` means: a Registration, a Dispatch among registrations, an
    External (another module's), a BuiltinGradient, or a GRL102 Refusal."""
    key = facts.key(value)
    found = [r for r in facts.registrations if key is not None and r.name_key == key]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        return Refusal.of("GRL102", "ambiguous", target=code_of(value), count=len(found))
    if key is not None and key[0] == "str" and key[1] in ops.BUILTIN_GRADIENTS:
        return ops.BUILTIN_GRADIENTS[key[1]]
    external = facts.external(code_of(value))
    if external is not None and means_module_binding(facts, value):
        return external.refusal or external
    values = literal_values(facts, value)
    if isinstance(values, list):
        return dispatch(facts, value, values)
    if values is None:
        if key is not None and key[0] == "str" and ops.is_registered_op_type(key[1]):
            return Refusal.of("GRL102", "tensorflow_gradient", target=code_of(value), op=key[1])
        return Refusal.of("GRL102", "no_registration", target=code_of(value))
    return Refusal.of("GRL102", "no_registration_why", target=code_of(value), why=values.text, hints=values.hints)


def means_module_binding(facts: Facts, value: cst.BaseExpression) -> bool:
    """A target spelt as the run's facts saw it means the module-level binding they followed:
    a literal; a name whose every binding is a module-level import or assignment; ``m.NAME``
    whose ``m`` is a module-level import."""
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    while isinstance(value, cst.Attribute):
        value = value.value
        if not isinstance(value, (cst.Attribute, cst.Name)):
            return False
        if isinstance(value, cst.Name):
            refs = facts.referents(value)
            return bool(refs) and all(isinstance(r, ImportAssignment) and isinstance(r.scope, GlobalScope)
                                      for r in refs)
    refs = facts.referents(value) if isinstance(value, cst.Name) else []
    return bool(refs) and all(isinstance(r.scope, GlobalScope) and isinstance(r, Assignment) for r in refs)


def dispatch(facts: Facts, expr: cst.BaseExpression, values: list[str | None]) -> Meaning:
    choices: dict = {}
    for value in values:
        if value is None:
            continue
        found = [r for r in facts.registrations if r.name_key == ("str", value)]
        if len(found) != 1:
            return Refusal.of("GRL102", "may_be", target=code_of(expr), value=value, count=len(found) or "no")
        choices.setdefault(value, found[0])
    if len(choices) == 1:  # the name only ever holds one gradient name: call its function
        return next(iter(choices.values()))
    return Dispatch(expr, choices, {v: facts.spelled(v) for v in choices})


def literal_values(facts: Facts, expr: cst.BaseExpression) -> list[str | None] | Reason | None:
    """The string literals a target name can hold where the block uses it, as a list (None for
    a value that a guard ``if name:`` around the block rules out), or the Reason why not.
    Followed: ``name = "Lit"`` and ``name = {"k": "Lit", ...}[key]`` lines of the same function;
    a binding that runs before the block on every path (a line of the function body, or of a
    ``try`` body whose handlers all raise) hides the ones before it, parameters included."""
    if not isinstance(expr, cst.Name):
        return None
    with_node = next((n for n in _ancestors(facts, expr) if isinstance(n, cst.With)), None)
    refs = facts.referents(expr)
    if with_node is None or not refs:
        return None
    body = _body_of(facts, with_node)
    if body is None:
        return None
    use_index = _top_index(facts, with_node, body)
    if use_index is None:  # the block is not in the body its ancestors hold: never so
        return None
    placed = _placed(facts, expr, refs, with_node, body)
    if isinstance(placed, Reason):
        return placed
    kills = [index for index, _, always in placed if always and index < use_index]
    start = max(kills) if kills else -1
    values: list = []
    for index, ref, _ in placed:
        if index < start or index > use_index:
            continue
        if index == -1:
            param = ref.node if isinstance(ref.node, cst.Param) else facts.parent(ref.node)
            passed = parameter_values(facts, cst.ensure_type(param, cst.Param))  # _placed's -1: a parameter
            if isinstance(passed, Reason):
                return Reason(f"`{expr.value}` is a parameter; {passed.text}", passed.hints)
            values.extend(passed)
            continue
        found = facts.simple_assign_value(ref)
        literal = _literals(facts, found[1]) if found else None
        if literal is None:
            line = facts.pos(ref.node)[0] if ref.node is not None else 0  # _placed: a binding with a node
            return Reason(f"`{expr.value}` is bound to an expression the tool cannot read (line {line})")
        values.extend(literal)
    if None in values or "" in values:
        guard = next((n for n in _ancestors(facts, with_node) if isinstance(n, cst.If)
                      and isinstance(n.test, cst.Name) and n.test.value == expr.value
                      and facts.referents(n.test) == refs), None)
        if guard is None or not any(_inside(facts, with_node, stmt) for stmt in guard.body.body):
            return Reason(f"`{expr.value}` may be None or empty at the block, where TF1 raised")
        values = [v for v in values if v]
    return values or None


def _placed(facts: Facts, expr: cst.Name, refs: list[BaseAssignment], with_node: cst.With,
            body: list[cst.BaseStatement]) -> list[tuple[int, BaseAssignment, bool]] | Reason:
    """(index in the function's body, binding, whether it runs on every path) of each binding of
    ``expr``: -1 for a parameter; the Reason where one is bound where the tool cannot follow it."""
    placed = []
    for ref in refs:
        node = ref.node
        if node is None or facts.scope(node) is not facts.scope(with_node) or isinstance(ref, ImportAssignment):
            return Reason(f"`{expr.value}` is bound where the tool cannot follow it")
        if isinstance(node, cst.Param) or (facts.parent(node) is not None and isinstance(
                facts.parent(node), cst.Param)):
            placed.append((-1, ref, False))
            continue
        index = _top_index(facts, node, body)
        if index is None:
            return Reason(f"`{expr.value}` is bound where the tool cannot follow it")
        placed.append((index, ref, _always_runs(facts, node, body[index])))
    return placed


_CALLERS_DECIDE = Reason("its callers decide which gradient TF1 used")


def parameter_values(facts: Facts, param: cst.Param) -> list[str | None] | Reason:
    """The literals a parameter can hold: its default and what every call of its function
    passes, when the function is private to this module (``_name`` at module level, or local
    to a function) and every mention of it is a direct call passing a literal or nothing.
    A list, or the Reason why not (its callers decide which gradient TF1 used)."""
    params = facts.parent(param)
    fdef = facts.parent(params)
    if not isinstance(params, cst.Parameters) or not isinstance(fdef, cst.FunctionDef) or fdef.decorators:
        return _CALLERS_DECIDE
    scope = facts.scope(fdef)
    if scope is None:  # a def is always in a scope
        return _CALLERS_DECIDE
    private = isinstance(scope, FunctionScope) or (isinstance(scope, GlobalScope)
                                                    and fdef.name.value.startswith("_"))
    if not private:  # the helper hint: a block that also hands control to unseen code replaces it
        return Reason("its callers decide which gradient TF1 used, and callers outside this file may pass any name",
                      (Hint("helper", f"a module-private `_{fdef.name.value}` called only with literals here would "
                                      "be migrated"),))
    if param in params.params:
        position = list(params.params).index(param)
    elif param in params.kwonly_params:
        position = None
    else:
        return _CALLERS_DECIDE
    assignments = scope.assignments[fdef.name.value]
    if len(assignments) != 1 or not assignments[0].references:
        return Reason(f"`{fdef.name.value}` is bound more than once, or never called, in its scope")
    default = None
    if isinstance(param.default, (cst.SimpleString, cst.ConcatenatedString)):
        default = _literals(facts, param.default)
    elif isinstance(param.default, cst.Name) and param.default.value == "None":
        default = [None]
    values = []
    for access in assignments[0].references:
        call = facts.parent(access.node)
        if not isinstance(call, cst.Call) or call.func is not access.node or any(a.star for a in call.args):
            return Reason(f"`{fdef.name.value}` is used other than by a direct call (line "
                          f"{facts.pos(access.node)[0]}); its callers decide which gradient TF1 used")
        given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param.name.value),
                     None)
        positional = [a for a in call.args if a.keyword is None]
        if given is None and position is not None and position < len(positional):
            given = positional[position].value
        if given is None:
            if default is None:
                return Reason(f"a call at line {facts.pos(call)[0]} passes no literal for it")
            values.extend(default)
            continue
        literal = [None] if isinstance(given, cst.Name) and given.value == "None" else _literals(facts, given)
        if literal is None or isinstance(given, cst.Subscript):
            return Reason(f"the call at line {facts.pos(call)[0]} passes `{code_of(given)}`, not a literal")
        values.extend(literal)
    return values


def _literals(facts: Facts, value: cst.BaseExpression) -> list[str | None] | None:
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        v = string_value(value)
        if v is None:
            return None
        facts.spell(v, code_of(value))
        return [v]
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Dict):
        out: list[str | None] = []
        for element in value.value.elements:
            if not isinstance(element, cst.DictElement):
                return None
            item = element.value
            text = string_value(item)
            if isinstance(item, cst.Name) and item.value == "None":
                out.append(None)
            elif text is not None:
                out.append(text)
                facts.spell(text, code_of(item))
            else:
                return None
        return out
    return None


def _ancestors(facts: Facts, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    above = facts.parent(node)
    while above is not None:
        yield above
        above = facts.parent(above)


def _inside(facts: Facts, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return node is container or any(a is container for a in _ancestors(facts, node))


def _body_of(facts: Facts, node: cst.CSTNode) -> list[cst.BaseStatement] | None:
    """The statements of the function (or module) whose code ``node`` is."""
    for a in _ancestors(facts, node):
        if isinstance(a, cst.FunctionDef):
            return list(a.body.body) if isinstance(a.body, cst.IndentedBlock) else None
        if isinstance(a, (cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(a, cst.Module):
            return list(a.body)
    return None


def _top_index(facts: Facts, node: cst.CSTNode, body: list[cst.BaseStatement]) -> int | None:
    for index, stmt in enumerate(body):
        if _inside(facts, node, stmt):
            return index
    return None


def _always_runs(facts: Facts, node: cst.CSTNode, top: cst.BaseStatement) -> bool:
    """``node`` (a binding) runs whenever ``top`` (a statement of the function body) completes:
    a plain line there, or a line of a ``try`` body whose handlers all end in ``raise``."""
    line = facts.parent(facts.parent(facts.parent(node)))  # Name -> AssignTarget -> Assign -> line
    if line is top:
        return True
    if isinstance(top, cst.Try) and not top.finalbody and line in top.body.body:
        return all(h.body.body and isinstance(h.body.body[-1], cst.SimpleStatementLine)
                   and isinstance(h.body.body[-1].body[-1], cst.Raise) for h in top.handlers)
    return False
