"""--use-runtime: a module whose only job is the DANN ``FlipGradientBuilder`` (a class counting its
calls around one gradient reversal, and a module-level instance) becomes a re-export of the shim's
builder and the same instance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..nodes import bound_name, code_of, is_docstring, is_import_line, parsed_statement, star_exports
from .base import Idiom, source
from .contract import rule

if TYPE_CHECKING:
    from ..plan import Plan


IDIOM = Idiom(
    name="dann_reexport",
    summary="with --use-runtime, a module holding only the DANN builder re-exports tf_grl_migrate's",
    cases=("dann_builder_class", "tf_upgrade_v2_output"),
    runtime=True,
    valid=(source("""
        \"\"\"Gradient reversal (Ganin & Lempitsky), as a builder whose instance is called.\"\"\"
        import tensorflow as tf


        class FlipGradientBuilder:
            def __init__(self):
                self.num_calls = 0

            def __call__(self, x, l=1.0):
                grad_name = "GradientReversal_%d" % self.num_calls

                @tf.RegisterGradient(grad_name)
                def _reverse(op, grad):
                    return [-l * grad]

                with tf.get_default_graph().gradient_override_map({"Identity": grad_name}):
                    y = tf.identity(x)
                self.num_calls += 1
                return y


        flip_gradient = FlipGradientBuilder()
        """),),
)


@rule("rewrite_module")
def rewrite_module(module: cst.Module, plan: Plan) -> cst.Module | None:
    """--use-runtime: a module whose only job is the DANN builder becomes a re-export of the shim's
    builder class and a module-level instance of it, as the legacy module had.

    Shape: docstring, imports, ``class C`` with ``__init__`` (``self.num_calls = 0``) and
    ``__call__(self, x, l=1.0)`` whose every statement is override plumbing, the counter, the
    shim call ``tf_grl_migrate.flip_gradient(x, l)`` and ``return``, then ``name = C()``. The
    imports a star-import of the module would hand on stay.
    Returns the new module, or None when the module is anything more.
    """
    head: list[cst.BaseStatement] = []
    cls: cst.ClassDef | None = None
    instance: str | None = None
    exported = star_exports(module)
    for stmt in module.body:
        if is_docstring(stmt) and not head and cls is None:
            head.append(stmt)
        elif isinstance(stmt, cst.SimpleStatementLine) and is_import_line(stmt):
            if any(_future_or_handed_on(small, exported) for small in stmt.body):
                head.append(stmt)  # `from flip_gradient import *` elsewhere may hand its imports on
        elif isinstance(stmt, cst.ClassDef) and cls is None:
            cls = stmt
        elif cls is not None and instance is None and _instantiates(stmt, cls.name.value):
            assign = cst.ensure_type(cst.ensure_type(stmt, cst.SimpleStatementLine).body[0], cst.Assign)
            instance = cst.ensure_type(assign.targets[0].target, cst.Name).value
        else:
            return None
    if cls is None or instance is None or not _is_dann_builder(cls, plan):
        return None
    # The legacy module-level instance keeps its shape: callable, and carrying `num_calls`.
    name = cls.name.value
    alias = "" if name == "FlipGradientBuilder" else f" as {name}"
    reexport = parsed_statement(f"from tf_grl_migrate import FlipGradientBuilder{alias}\n")
    if head:
        reexport = reexport.with_changes(leading_lines=[cst.EmptyLine()])
    instance_line = parsed_statement(f"{instance} = {name}()\n").with_changes(
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return module.with_changes(body=[*head, reexport, instance_line])


def _future_or_handed_on(small: cst.BaseSmallStatement, exported: set[str] | bool) -> bool:
    """An import a re-export keeps: ``from __future__``, or one binding a name ``import *`` hands on."""
    if not isinstance(small, (cst.Import, cst.ImportFrom)):
        return False  # an import line holds only imports
    if isinstance(small, cst.ImportFrom) and small.module is not None and code_of(small.module) == "__future__":
        return True
    if isinstance(small.names, cst.ImportStar):
        return True
    names = [bound_name(alias) for alias in small.names]
    return any(not n.startswith("_") if exported is True else isinstance(exported, set) and n in exported
               for n in names)


def _instantiates(stmt: cst.BaseStatement, class_name: str) -> bool:
    """``name = ClassName()`` alone on its line. (Plain isinstance checks: importing libcst.matchers
    for this one match would cost every worker process ~0.15 s, as much as libcst itself.)"""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    assign = stmt.body[0]
    return (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(assign.value, cst.Call) and not assign.value.args
            and isinstance(assign.value.func, cst.Name) and assign.value.func.value == class_name)


def _is_dann_builder(cls: cst.ClassDef, plan: Plan) -> bool:
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    others = [s for s in cls.body.body if not isinstance(s, cst.FunctionDef) and not is_docstring(s)]
    if others or set(methods) != {"__init__", "__call__"}:
        return False
    init_body = [s for s in methods["__init__"].body.body if not is_docstring(s)]
    if len(init_body) != 1 or code_of(init_body[0]).strip() != "self.num_calls = 0":
        return False
    call = methods["__call__"]
    params = call.params.params
    if len(params) != 3 or call.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or call.params.kwonly_params:
        return False
    x, l, default = params[1].name.value, params[2].name.value, params[2].default
    if (x, l) != ("x", "l"):  # callers may pass them by keyword: only the shim's own names re-export
        return False
    if default is not None and not (isinstance(default, (cst.Float, cst.Integer)) and float(default.value) == 1.0):
        return False
    flips = [c for c, scale in plan.runtime_calls.items()
             if isinstance(scale, cst.Name) and scale.value == l and isinstance(c.args[0].value, cst.Name)
             and c.args[0].value.value == x]
    for stmt in call.body.body:
        if stmt in plan.removed_stmts or stmt in plan.removed_defs or is_docstring(stmt):
            continue
        code = code_of(stmt).strip()
        if code == "self.num_calls += 1" or code.startswith("return "):
            continue
        if isinstance(stmt, cst.With) and len(plan.with_items.get(stmt, ())) == len(stmt.items):
            inner = [code_of(s).strip() for s in stmt.body.body]
            if len(inner) == 1 and any(inner[0].endswith("= " + code_of(c)) or inner[0] == "return " + code_of(c)
                                       for c in flips):
                continue
        return False
    return len(flips) == 1
