"""Cheap looks before libcst: most files cannot hold an override, and libcst's analysis of a
large module costs seconds. Nothing here imports libcst (or TensorFlow)."""

from __future__ import annotations

MARKER = "gradient_override_map"


def may_hold_override(code: str) -> bool:
    return MARKER in code


def unknown_op_message(op_name: str) -> str:
    return (f"op type '{op_name}' is not in tf-grl-migrate's op table; wrap that op by hand in a "
            "@tf.custom_gradient function (TF2 ignores gradient_override_map)")


def screen(code: str):
    """A cheap look with Python's own parser before libcst's (much slower) analysis.

    Returns ``[]`` when no ``.gradient_override_map(...)`` call exists (only mentions in strings,
    comments or attribute assignments), the GRL104 diagnostics when every call is a ``with`` item
    whose literal map starts with an op type outside the table (the full analysis decides exactly
    that, first), and None when libcst must decide (or the file does not parse for ``ast``).
    """
    import ast  # here, not at the top: the CLI imports this module before it knows of any candidate

    from . import ops
    from .report import Diagnostic

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "gradient_override_map"]
    if not calls:
        return []
    items = {id(item.context_expr): (node, item) for node in ast.walk(tree) if isinstance(node, ast.With)
             for item in node.items}
    diagnostics = []
    for call in calls:
        with_node, item = items.get(id(call), (None, None))
        if with_node is None or item.optional_vars is not None or len(call.args) != 1 or call.keywords:
            return None
        mapping = call.args[0]
        if not isinstance(mapping, ast.Dict) or not mapping.keys or not isinstance(mapping.keys[0], ast.Constant):
            return None
        first = mapping.keys[0].value
        if not isinstance(first, str) or first in ops.OP_TYPES:
            return None
        diagnostics.append(Diagnostic(with_node.lineno, with_node.col_offset + 1, "GRL104", unknown_op_message(first)))
    return sorted(set(diagnostics))
