"""Cheap looks before libcst: most files cannot hold an override, and libcst's analysis of a
large module costs seconds. Nothing here imports libcst (or TensorFlow)."""

from __future__ import annotations

import ast  # already loaded when the CLI starts (click imports inspect, which imports it): costs nothing
import functools
import re
from collections.abc import Iterator
from types import CodeType
from typing import Any

MARKER = "gradient_override_map"
PRIVATE = "_gradient_override_map"  # tf.Graph's own dict, which some code writes directly
DEFUN = "Defun"  # tensorflow.python.framework.function.Defun: TF1's other gradient override
RUNTIME = "tf_grl_migrate"  # `tf_grl_migrate.gradient_override_map(...)`: already migrated (--use-runtime)
# the call a notebook's magic line is glued in as (notebooks.py), which messages name as a magic (nodes.quoted)
MAGIC = "__tf_grl_migrate_magic__"


def is_runtime_map(receiver_name: str | None) -> bool:
    """Whether ``<receiver>.gradient_override_map`` is the runtime's map (code already migrated)."""
    return receiver_name == RUNTIME


MARKERS = (MARKER, DEFUN)  # a file without one of these cannot hold an override
_MARKER_BYTES = tuple(m.encode() for m in MARKERS)


def may_hold_override(code: str) -> bool:
    return any(marker in code for marker in MARKERS)


def may_hold_override_bytes(raw: bytes) -> bool:
    return any(marker in raw for marker in _MARKER_BYTES)


def screen(code: str, tree: Any = None) -> tuple[list | None, Any]:
    """A cheap look with Python's own compiler and parser before libcst's (much slower) analysis.
    It only ever says "nothing to do here"; every verdict on an override is the analysis's.

    Returns ``([], None)`` when nothing in the module can reach the map (no call of
    ``.gradient_override_map``, no wrapper or alias named like it, no reference to the graph's
    private ``_gradient_override_map``: only mentions in strings, comments or attribute
    assignments), else ``(None, tree)``: libcst must decide, and ``tree`` is the module's ``ast``
    (None where Python cannot parse it), passed on for the slicing of a long module and the
    safety net, so the text is parsed once. ``tree``: ``code``'s ``ast`` where the caller has it
    (the safety net's, after a rewrite), walked instead of parsing again.
    """
    if tree is None:
        if len(code) >= COMPILE_FIRST and _names_nowhere(code):
            return [], None
        tree = parse(code)
    return ([], None) if tree is not None and _nothing_reaches_the_map(tree, code) else (None, tree)


# From this many characters the bytecode screen goes first: it saves the tree where the map is
# only mentioned in docstrings (TensorFlow's generated modules); a smaller module takes longer to
# compile than to parse and walk, and one that holds an override needs the tree anyway.
COMPILE_FIRST = 64_000


def _nothing_reaches_the_map(tree: Any, code: str = "") -> bool:
    """No node of ``tree`` reaches the map (``_reaches``). The lines that name it in ``code`` are
    looked at first (``_reaches_on``): a node there that does answers for the whole, without
    walking the rest of a module that holds an override."""
    if code and tree.body:
        lines, line, at = set(), 1, 0
        for m in _NAMED.finditer(code):  # a line's number, as ast counts (only speed is at stake)
            line, at = line + code.count("\n", at, m.start()), m.start()
            lines.add(line)
        if _reaches_on(tree, lines):
            return False
    return not _reaches(tree)


_NAMED = re.compile("|".join(MARKERS))  # where a statement may reach the map (PRIVATE holds MARKER)


def _reaches(tree: Any) -> bool:
    """Whether a node under ``tree`` (itself included) may reach the map."""
    return any(_reaching(n) for n in walk(tree))


def _reaches_on(tree: Any, lines: set[int]) -> bool:
    """Whether a node under ``tree`` that stands on one of ``lines`` (or holds one) may reach the
    map: those on other lines are not walked. True only where ``_reaches`` is."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _reaching(node):
            return True
        for child in _children(node):
            first = getattr(child, "lineno", None)
            if first is not None:  # a node of no line of its own (arguments, a with item) is walked
                first = min([first, *(d.lineno for d in getattr(child, "decorator_list", ()))])
                last = getattr(child, "end_lineno", None) or first
                if not any(first <= line <= last for line in lines):
                    continue
            stack.append(child)
    return False


def walk(node: Any) -> Iterator[Any]:
    """``ast.walk(node)``: the same nodes in the same order (breadth first, each node's children
    in field order), read without ``ast.iter_child_nodes``' two generators per node."""
    todo = [node]
    for n in todo:  # grows while it is read: breadth first
        yield n
        todo.extend(_children(n))


def _children(node: Any) -> list:
    """``node``'s child nodes in field order, as ``ast.iter_child_nodes`` gives them."""
    out = []
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            out.extend([child for child in value if isinstance(child, ast.AST)])
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _reaching(n: Any) -> bool:
    """Whether ``n`` itself may reach the map."""
    if isinstance(n, ast.Attribute) and n.attr in (MARKER, PRIVATE):
        if isinstance(n.value, ast.Name) and is_runtime_map(n.value.id):
            return False  # the runtime's map, not a graph's: migrated already
        if n.attr == PRIVATE or isinstance(n.ctx, ast.Load):
            return True
    elif ((isinstance(n, ast.Name) and n.id == MARKER) or (isinstance(n, ast.alias) and n.name == MARKER)
          or (isinstance(n, ast.Constant) and n.value == MARKER)):
        return True  # a wrapper named like the API, imported under another name, or getattr(g, "...")
    elif (isinstance(n, ast.Attribute) and n.attr == DEFUN) or (isinstance(n, ast.Name) and n.id == DEFUN):
        return True  # a Defun: its gradient is the analysis's to decide
    return False


def parse(code: str) -> Any:
    """``ast.parse(code)``, or None where Python cannot parse it."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _names_nowhere(code: str) -> bool:
    """True when no code object compiled from ``code`` names ``gradient_override_map`` or holds it
    as a string of its own (``_names_in``), so nothing in it can call it: the mention is in other
    strings or comments only. It says so only where ``_nothing_reaches_the_map`` would on the
    tree, faster (a 600 KB generated TensorFlow module whose docstrings show the map compiles in half
    the time ``ast.parse`` takes and needs no tree walk). CPython keeps the names of dead code
    (``if 0:``, after ``return``); the one place a name vanishes is an annotation that is never
    evaluated, which never enters the map either. False whenever this cannot be told (the text
    does not compile, or this interpreter drops dead code's names, which a probe checks once)."""
    if not _compiler_keeps_dead_names():
        return False
    try:
        compiled = compile(code, "<screen>", "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return not _names_in(compiled)


def _names_in(code_object: CodeType) -> bool:
    """Whether the code names the map (or a Defun), as a global, an attribute or a local (a
    parameter named like the map: a wrapper), or holds the map's name as a string constant
    (``getattr(g, "gradient_override_map")``, which reaches the map by its name)."""
    for names in (code_object.co_names, code_object.co_varnames, code_object.co_cellvars,
                  code_object.co_freevars):
        if MARKER in names or PRIVATE in names or DEFUN in names:
            return True
    return any(const == MARKER or (hasattr(const, "co_names") and _names_in(const))
               for const in code_object.co_consts)


_DEAD_NAMES_KEPT: bool | None = None


def _compiler_keeps_dead_names() -> bool:
    global _DEAD_NAMES_KEPT
    if _DEAD_NAMES_KEPT is None:
        probe = ("if 0:\n    with g.gradient_override_map({}):\n        pass\n"
                 "def f():\n    return\n    g.gradient_override_map\n")
        compiled = compile(probe, "<probe>", "exec", dont_inherit=True, optimize=0)
        _DEAD_NAMES_KEPT = MARKER in compiled.co_names and _names_in(
            next(c for c in compiled.co_consts if hasattr(c, "co_names")))
    return _DEAD_NAMES_KEPT


_MAP_LITERAL = re.compile(rb"gradient_override_map\(\s*\{([^{}]*)\}")
_ENTRY = re.compile(rb"""(?:'[^']*'|"[^"]*")\s*:\s*([^,]+)""")
_QUOTED = re.compile(rb"""\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*$""")
_GRAD_FUNC = re.compile(rb"python_grad_func\s*=\s*([A-Za-z_]\w*)")
_DOTTED = re.compile(rb"\s*([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*\s*$")


def may_link(raw: bytes) -> bool:
    """Whether a module's override maps may name a gradient another module registers, decided on
    the bytes (no parse, no op table unless a literal is registered nowhere here), so that a run
    over a tree reads facts (tf_grl_migrate.migrator.facts) only where a link is possible: a map literal
    whose target is a literal this module does not register and TensorFlow may not provide, a
    name the module imports or binds at module level to a literal, or ``m.NAME`` of an import; or
    a Defun's ``python_grad_func=`` naming an import (its body is read in the module defining it)."""
    words = _Words(raw)
    for root in _GRAD_FUNC.findall(raw):
        if root in words.imported:
            return True
    for body in _MAP_LITERAL.findall(raw):
        for target in _ENTRY.findall(body):
            quoted = _QUOTED.match(target)
            if quoted is not None:
                value = quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
                if value not in words.registered and not _tensorflows_own(value.decode("utf-8", "replace")):
                    return True
                continue
            dotted = _DOTTED.match(target)
            if dotted is None:
                continue  # a call or an expression: never linked
            root = dotted.group(1)
            if root in words.imported or (b"." not in target and root in words.bound_to_literal):
                return True
    return False


_IMPORT_TAIL = re.compile(rb"\bimport\b([^\n]*)")
_WORD = re.compile(rb"\w+")
_REGISTERED = re.compile(rb"RegisterGradient\(\s*['\"]([^'\"]*)['\"]\s*\)")
_BOUND_TO_LITERAL = re.compile(rb"(?m)^([A-Za-z_]\w*)\s*=\s*['\"]")


class _Words:
    """The words ``may_link`` looks names up in, each set read from the bytes when first asked for
    (one scan each, where a pattern per name would be compiled per module)."""

    def __init__(self, raw: bytes):
        self.raw = raw

    @functools.cached_property
    def imported(self) -> set[bytes]:
        """Every word after an ``import`` on its line (``from m import a as b``: m is before it)."""
        return {word for tail in _IMPORT_TAIL.findall(self.raw) for word in _WORD.findall(tail)}

    @functools.cached_property
    def registered(self) -> set[bytes]:
        """The gradient names ``RegisterGradient("...")`` registers here."""
        return set(_REGISTERED.findall(self.raw))

    @functools.cached_property
    def bound_to_literal(self) -> set[bytes]:
        """Names a line starts by binding to a string literal (``NAME = "..."``)."""
        return set(_BOUND_TO_LITERAL.findall(self.raw))


def _tensorflows_own(value: str) -> bool:
    from ..knowledge import ops

    return value in ops.BUILTIN_GRADIENTS or value in ops.op_type_names()


# -- the lines of a module-level statement: what slicing sets aside, what the safety net pairs ----------
def first_line(stmt: ast.stmt) -> int:
    """A statement's first line, its decorators' included."""
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])


def last_line(stmt: ast.stmt) -> int:
    return stmt.end_lineno if stmt.end_lineno is not None else stmt.lineno  # ast.parse always sets it


def statement_text(stmt: ast.stmt, lines: list[str]) -> str:
    """The whole lines a statement stands on (``lines``: the module's, with their line breaks)."""
    return "".join(lines[first_line(stmt) - 1:last_line(stmt)])
