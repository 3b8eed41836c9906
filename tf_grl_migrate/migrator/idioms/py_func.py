"""--use-runtime: TF1's widely copied ``py_func`` with a gradient,

    tf.RegisterGradient(rnd_name)(grad)
    with g.gradient_override_map({"PyFunc": rnd_name}):
        return tf.py_func(func, inp, Tout, stateful=stateful, name=name)

becomes ``return tf_grl_migrate.py_func(func, inp, Tout, stateful=stateful, name=name, grad=grad,
override_types=("PyFunc",))``: ``tf.numpy_function`` under ``tf.custom_gradient``, ``grad(op, *dys)``
receiving an op with ``inputs`` and ``outputs`` (TF2 has no PyFunc op eagerly, so no map can find
one: the runtime map refuses ``PyFunc`` keys). ``override_types`` keeps TF1's rule that the map
applied only to the op type made (``PyFunc`` when stateful, ``PyFuncStateless`` otherwise).

Taken where: the map (a literal) names only PyFunc op types, all to one name; that name is
registered by ``tf.RegisterGradient(name)(grad)`` in the same function before the block and read
nowhere else; the block is ``return`` or ``y = `` of one ``py_func`` call with TF1's parameters,
then (after ``y = ``) only statements that make no op (``y[0].set_shape(x.get_shape())``,
``return y``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ...knowledge import ops
from ..nodes import calls_in, parsed_expression, receiver, string_value, with_keywords
from ..plan import DropItem, DropStatement, Edit, Keep, Recall
from ..sites import Site
from ..verdicts import Hint
from . import override_block
from .base import Idiom, source
from .contract import Taken, rule

if TYPE_CHECKING:
    from .contract import Converting, Facts


IDIOM = Idiom(
    name="py_func",
    summary="with --use-runtime, py_func with a registered gradient becomes tf_grl_migrate.py_func(..., grad=...)",
    cases=("py_func_with_a_gradient",),
    runtime=True,
    valid=(source("""
        import numpy as np
        import tensorflow as tf


        def py_func(func, inp, Tout, stateful=True, name=None, grad=None):
            rnd_name = "PyFuncGrad" + str(np.random.randint(0, 1e8))
            tf.RegisterGradient(rnd_name)(grad)
            g = tf.get_default_graph()
            with g.gradient_override_map({"PyFunc": rnd_name}):
                return tf.py_func(func, inp, Tout, stateful=stateful, name=name)
        """),),
)

HINT = Hint("runtime", "--use-runtime migrates it to tf_grl_migrate.py_func",
            "`tf-grl-migrate --use-runtime` migrates this py_func recipe: tf_grl_migrate.py_func(..., grad=...) "
            "runs the function with tf.numpy_function under tf.custom_gradient, the gradient receiving an op with "
            "inputs and outputs.")
PY_FUNC = frozenset({"tensorflow.py_func", "tensorflow.python.ops.script_ops.py_func"})
_PARAMETERS = ("func", "inp", "Tout", "stateful", "name")


@dataclass(eq=False)
class PyFuncSite:
    site: Site
    call: cst.Call  # the py_func call
    registration: cst.SimpleStatementLine  # `tf.RegisterGradient(name)(grad)`
    grad: cst.BaseExpression
    types: tuple


@rule("take")
def take(facts: Facts) -> Taken:
    return Taken([found for site in facts.sites if site.refusal and (found := match(facts, site)) is not None])


@rule("calls")
def calls(taken: Taken) -> list[cst.Call]:
    return [found.site.item.item for found in taken.taken]


@rule("emit_all")
def emit_all(builder: Converting, taken: Taken) -> list[Edit]:
    return [edit for found in taken.taken for edit in emit(builder, found)]


@rule("hint")
def hint(facts: Facts, call: cst.BaseExpression, site: Site | None) -> Hint | None:
    return HINT if site is not None and match(facts, site) is not None else None


@rule("why_not")
def why_not(facts: Facts, call: cst.BaseExpression, site: Site | None) -> str | None:
    return None  # a block that is not the recipe is the runtime map's to take or explain


def match(facts: Facts, site: Site) -> PyFuncSite | None:
    call = cst.ensure_type(site.item.item, cst.Call)
    if site.item.asname is not None or len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    if not facts.is_graph(receiver(call)):
        return None
    mapping = override_block.resolve_map(facts, call.args[0].value)
    if not isinstance(mapping, cst.Dict) or not mapping.elements:
        return None
    types: list[str] = []
    values: list[cst.Name] = []
    for element in mapping.elements:
        op_type = string_value(element.key) if isinstance(element, cst.DictElement) else None
        if not (op_type in ops.PY_FUNC_TYPES and isinstance(element, cst.DictElement)
                and isinstance(element.value, cst.Name)):
            return None
        types.append(op_type)
        values.append(element.value)
    key = facts.key(values[0])
    if key is None or key[0] != "var" or any(facts.key(v) != key for v in values):
        return None
    body = site.with_node.body.body
    if not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    small = body[0].body[0]
    made = small.value if isinstance(small, (cst.Return, cst.Assign)) else None
    if isinstance(small, cst.Assign) and len(small.targets) != 1:
        return None
    if len(body) > 1 and not (isinstance(small, cst.Assign) and all(_makes_no_op(s) for s in body[1:])):
        return None
    if not (isinstance(made, cst.Call) and facts.qn(made.func) & PY_FUNC and _tf1_arguments(made)):
        return None
    registration = next((r.stmt for r in facts.registrations if r.kind in ("call", "factory") and r.name_key == key
                         and r.stmt is not None), None)
    if registration is None:
        return None
    registering = getattr(registration.body[0], "value", None)  # RegisterGradient(name)(grad), or an assignment's
    grad = registering.args[0].value if isinstance(registering, cst.Call) and registering.args else None
    if not isinstance(grad, (cst.Name, cst.Attribute)):
        return None
    here = facts.scope(site.with_node)
    if facts.scope(registration) is not here or facts.where(registration) > facts.where(site.with_node):
        return None
    uses = [a for ref in facts.referents(values[0]) for a in ref.references]
    if len(uses) != len(values) + 1:  # the registration and the map read the name, nothing else
        return None
    return PyFuncSite(site, made, registration, grad, tuple(dict.fromkeys(types)))


def _makes_no_op(stmt: cst.CSTNode) -> bool:
    """A statement after the py_func call that no op of a mapped type can come from: simple
    statements whose only calls are the static-shape methods (``res[0].set_shape(x.get_shape())``,
    ``return res``) and that neither await nor yield, so the map's block may end before it."""
    if not isinstance(stmt, cst.SimpleStatementLine) or _suspends(stmt):
        return False
    if not all(isinstance(c.func, cst.Attribute) and c.func.attr.value in _SHAPE_METHODS for c in calls_in(stmt)):
        return False
    return all(isinstance(s, (cst.Expr, cst.Assign, cst.Return, cst.Pass)) for s in stmt.body)


_SHAPE_METHODS = ("set_shape", "get_shape", "as_list")


def _suspends(node: cst.CSTNode) -> bool:
    """Whether ``node`` awaits or yields anywhere (libcst.matchers would say it too, at ~0.14 s
    of import in every worker)."""
    return isinstance(node, (cst.Await, cst.Yield)) or any(_suspends(child) for child in node.children)


def _tf1_arguments(call: cst.Call) -> bool:
    """py_func(func, inp, Tout, stateful=True, name=None), passed as TF1 named them."""
    if any(a.star for a in call.args):
        return False
    positional = [a for a in call.args if a.keyword is None]
    named = [*_PARAMETERS[:len(positional)], *(a.keyword.value for a in call.args if a.keyword is not None)]
    return (len(positional) <= len(_PARAMETERS) and len(set(named)) == len(named)
            and set(named) <= set(_PARAMETERS) and set(_PARAMETERS[:3]) <= set(named))


def emit(builder: Converting, found: PyFuncSite) -> list[Edit]:
    builder.imports.runtime()
    types = ", ".join(f'"{t}"' for t in found.types)
    types = f"({types},)" if len(found.types) == 1 else f"({types})"

    def build(updated: cst.Call) -> cst.Call:
        added = [("grad", found.grad.deep_clone()), ("override_types", parsed_expression(types))]
        args = with_keywords(updated.args, added)
        return updated.with_changes(func=parsed_expression("tf_grl_migrate.py_func"), args=args)

    return [DropItem(found.site.with_node, found.site.item), DropStatement(found.registration),
            Keep(found.grad),  # moves to the call
            Recall(found.call, build)]
