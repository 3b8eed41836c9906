"""The rewrite's safety net: checks on the rewritten text, made with Python's own ``ast`` and
independent of the libcst analysis that planned the rewrite, so a bug or a gap there fails the
file (GRL904, nothing written) instead of changing a user's gradients.
Why it is built so: docs/design.md, "migrator/safety.py"."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

from .precheck import MARKER, statement_text, walk

RUNTIME_FLIP = "flip_gradient"  # tf_grl_migrate.flip_gradient(x, scale): the scale is added on purpose
RUNTIME_PY_FUNC = "py_func"  # tf_grl_migrate.py_func(..., grad=, override_types=): the registration moves there
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")  # where statements (and clauses) are
_BODIES = (*_STATEMENT_FIELDS, "decorator_list")
_HAZARDS = {
    ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await", ast.Import: "import",
    ast.ImportFrom: "from ... import", ast.AsyncFor: "async for", ast.AsyncWith: "async with",
    ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def", ast.ClassDef: "class", ast.Lambda: "lambda",
}


class SafetyError(Exception):
    """The rewrite did not pass the tool's own checks; the file must not be written."""


@dataclass(frozen=True)
class Span:
    """A statement of the original module that the plan removes, where the original's tree has
    it: the line and column its first statement starts at (as ``ast`` counts them, past its
    leading comment lines), the last line of its text, how many statements it is (``a; b`` is
    two), and its code (``source``), parsed on its own where no such statements are there (a
    comment line after a block's last statement ends its text below ast's end)."""

    line: int
    column: int
    last: int
    count: int
    source: Callable[[], str]


Piece = Union[str, Span]  # a statement's source, or where the original has it


class _Original:
    """The statements of the original module a plan names (``Span``), found in its tree (the
    screen's, or parsed here once) instead of parsing each one's code again."""

    def __init__(self, original: str, tree: ast.Module | None) -> None:
        self.original, self.tree = original, tree
        self._at: dict[tuple[int, int], tuple[list, int]] | None = None

    def module(self) -> ast.Module:
        if self.tree is None:
            self.tree = ast.parse(self.original)
        return self.tree

    def statements(self, piece: Piece) -> Sequence[ast.stmt]:
        if isinstance(piece, str):
            return ast.parse(piece).body
        if self._at is None:
            self._at = {}
            stack: list[ast.AST] = [self.module()]
            while stack:
                node = stack.pop()
                for field in _STATEMENT_FIELDS:
                    body = getattr(node, field, None)
                    if isinstance(body, list):
                        for i, child in enumerate(body):
                            if isinstance(child, ast.stmt):
                                self._at.setdefault((child.lineno, child.col_offset), (body, i))
                        stack.extend(body)
        body, i = self._at.get((piece.line, piece.column), ((), 0))
        found = body[i:i + piece.count]
        if (len(found) == piece.count and all(s.lineno == piece.line for s in found)
                and found[-1].end_lineno == piece.last and not getattr(found[0], "decorator_list", ())):
            return found
        return ast.parse(piece.source()).body


def check(original: str, new: str, removed: list, dissolved: Sequence[Piece], whole_module: bool = False,
          original_tree: ast.Module | None = None) -> ast.Module:
    """Raise :class:`SafetyError` unless ``new`` is ``original`` less the declared machinery;
    return ``ast.parse(new)``.

    ``removed``: (source or Span, enclosing def/class names, names the replacement binds again) of
    each statement the plan removes or replaces on purpose (compound ones count with everything
    inside them); ``dissolved``: the source or Span of each statement inside a removed override
    block; ``whole_module``: the plan replaces the module (a
    DANN builder becoming a re-export of the runtime), so only check 2 applies; ``original_tree``:
    ``ast.parse(original)`` when the caller has it (the screen's), else it is parsed here."""
    try:
        new_tree = ast.parse(new)
    except SyntaxError as exc:
        raise SafetyError(f"the rewritten code does not parse ({exc.msg}, line {exc.lineno}); nothing written") from exc
    known = _Original(original, original_tree)
    for piece in dissolved:
        for node in (n for statement in known.statements(piece) for n in walk(statement)):
            what = _hazard(node)
            if what:
                raise SafetyError(f"the rewrite would remove an override around `{what}`, which runs code the "
                                  "override applied to; nothing written (please report this)")
    if whole_module:
        return new_tree
    allowed: Counter[tuple] = Counter()
    scopes = _Scopes(new_tree)
    for piece, path, rebound in removed:
        tree = ast.Module(body=list(known.statements(piece)), type_ignores=[])
        allowed.update(_keys(tree, flips=False))
        _check_not_read(tree, path, scopes, set(rebound), new)
    original_tree = known.module()
    kept_old, kept_new = _unchanged(original, original_tree, new, new_tree)
    missing = (_keys(original_tree, flips=False, skip=kept_old) - _keys(new_tree, flips=True, skip=kept_new)
               - allowed)
    if missing:
        kind, shape = sorted(missing, key=repr)[0]
        raise SafetyError(f"the rewrite would remove a `{kind}` statement that is not override machinery "
                          f"({shape[:120]}); nothing written (please report this)")
    return new_tree


def _check_not_read(removed: ast.Module, path: tuple, scopes: _Scopes, rebound: set, new: str) -> None:
    """A removed ``name = ...`` (a graph look-up, a name builder, a counter) must not be read any
    more where it was bound: in the output, the function at ``path`` (or, at module level, the
    whole module) loads no name it bound. A name the output (``new``) never writes as a word is
    read nowhere: in ASCII code, a name's text is the name (Python reads ``ｇ`` as ``g``)."""
    bound = {t.id for node in removed.body if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    bound -= rebound
    if bound and new.isascii():
        bound = {name for name in bound if re.search(rf"\b{name}\b", new)}
    if not bound:
        return
    scope = scopes.at(path)
    if scope is None:
        return  # the whole definition went (a gradient function handed to the runtime)
    for name, line in scopes.loads(scope):
        if name in bound:
            raise SafetyError(f"the rewrite would remove the assignment of `{name}`, which the rewritten code "
                              f"still reads (line {line}); nothing written (please report this)")


class _Scopes:
    """The rewritten module's definitions by path, and the names each loads: each found once per
    check, however many removed statements ask (a gradient-reversal builder removes several from
    the one method)."""

    def __init__(self, tree: ast.Module) -> None:
        self._found: dict[tuple, ast.AST | None] = {(): tree}
        self._loads: dict[int, list[tuple[str, int]]] = {}

    def at(self, path: tuple) -> ast.AST | None:
        """The definition at ``path`` (each name: the first def or class of that name that
        ``ast.walk`` meets below the one before), or None where one is missing."""
        if path not in self._found:
            scope = self.at(path[:-1])
            self._found[path] = None if scope is None else next(
                (n for n in walk(scope) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and n.name == path[-1] and n is not scope), None)
        return self._found[path]

    def loads(self, scope: ast.AST) -> list[tuple[str, int]]:
        """(name, line) of each name ``scope`` loads, in ``ast.walk``'s order."""
        if id(scope) not in self._loads:
            self._loads[id(scope)] = [(n.id, n.lineno) for n in walk(scope)
                                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        return self._loads[id(scope)]


def _hazard(node: ast.AST) -> str | None:
    what = _HAZARDS.get(type(node))
    if what:
        return what
    if isinstance(node, ast.With) and any(not isinstance(item.context_expr, ast.Call) for item in node.items):
        return "with " + ast.unparse(
            next(i.context_expr for i in node.items if not isinstance(i.context_expr, ast.Call))
        )
    if isinstance(node, ast.comprehension) and node.is_async:
        return "async for"
    return None


def _unchanged(original: str, original_tree: ast.Module, new: str, new_tree: ast.Module) -> tuple[set[int], set[int]]:
    """The statements whose text is in both modules, paired one to one (by id, in each tree):
    their keys would cancel, so neither is walked. A statement is paired only with one of the
    very same lines, so nothing the rewrite removed or changed is left out. Module-level
    statements first; then, level by level, those in the classes left unpaired (the methods a
    rewrite did not touch, in the class it changed)."""
    old_lines, new_lines = original.splitlines(keepends=True), new.splitlines(keepends=True)
    kept_old: set[int] = set()
    kept_new: set[int] = set()
    old_level, new_level = list(original_tree.body), list(new_tree.body)
    while old_level and new_level:
        pending: dict[str, list[ast.stmt]] = {}
        for stmt in new_level:
            pending.setdefault(statement_text(stmt, new_lines), []).append(stmt)
        unpaired = []
        for stmt in old_level:
            twins = pending.get(statement_text(stmt, old_lines))
            if twins:
                kept_old.add(id(stmt))
                kept_new.add(id(twins.pop()))
            else:
                unpaired.append(stmt)
        old_level = _inner(unpaired)
        new_level = _inner([stmt for left in pending.values() for stmt in left])
    return kept_old, kept_new


def _inner(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The statements directly inside the classes among ``statements``: a class's methods are
    worth pairing (most stand as they were); inside a function, the statements are few and short,
    and keying them costs less than pairing."""
    return [stmt for cls in statements if isinstance(cls, ast.ClassDef) for stmt in cls.body]


def _keys(tree: ast.AST, flips: bool, skip: frozenset[int] | set[int] = frozenset()) -> Counter:
    keys: Counter[tuple] = Counter()
    for top in tree.body if isinstance(tree, ast.Module) else [tree]:
        for node in _statements(top, skip):
            keys.update(_statement_keys(node, flips))
    return keys


def _statements(top: ast.AST, skip: frozenset[int] | set[int] = frozenset()) -> Iterator[ast.stmt]:
    """Every statement in ``top`` (itself included), as ``ast.walk`` finds them, without walking
    the expressions (statements are only ever in the bodies of statements, ``except`` clauses
    and ``case`` clauses), but those in ``skip`` (ids) and everything inside them."""
    stack = [top]
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if isinstance(node, ast.stmt):
            yield node
        for field in _STATEMENT_FIELDS:
            stack.extend(getattr(node, field, ()))


def _statement_keys(stmt: ast.stmt, flips: bool) -> list:
    kind = type(stmt).__name__
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        items = [item for item in stmt.items if not _is_map_call(item.context_expr)]
        if not items:
            return []  # a dissolved override block: its statements are counted one by one
        return [(kind, _shape(items, flips))]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(kind, "def")]  # a converted gradient function changes its signature (and a shared name)
    if isinstance(stmt, ast.ClassDef):
        return [(kind, stmt.name)]
    if isinstance(stmt, ast.Import):
        return [(kind, f"{a.name} as {a.asname}") for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [(kind, f"{'.' * stmt.level}{stmt.module} {a.name} as {a.asname}") for a in stmt.names]
    return [(kind, _shape(stmt, flips, skip=_BODIES))]


def _is_map_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == MARKER)
        or (isinstance(node.func, ast.Name) and node.func.id == MARKER))


def _is_compat_v1(node: ast.AST) -> bool:
    """``<x>.compat.v1``."""
    return (isinstance(node, ast.Attribute) and node.attr == "v1" and isinstance(node.value, ast.Attribute)
            and node.value.attr == "compat")


def _shape(node: Any, flips: bool, skip: tuple[str, ...] = ()) -> object:
    """A statement's shape, blurred where the rewrite changes code on purpose: names (fresh
    inputs, renamed gradient functions), call targets (an op call becomes a call of its
    custom-gradient function; removed TF aliases get their TF2 names), a TF1-only name's
    ``compat.v1`` (``tf.AUTO_REUSE`` -> ``tf.compat.v1.AUTO_REUSE``), an op's ``name=`` (passed
    on inside that function), ``op.inputs[i]`` / ``op.outputs[0]`` (become the function's own
    names), ``op.inputs`` (the list of them), and ``a * b`` (wrapped: ``f(a, b)``). ``skip``: the
    fields left out (a compound statement's bodies: their statements count one by one). Built
    without copying the tree."""
    kind = node.__class__  # ast's node classes are leaves: compared by identity, the checks cost less
    if kind is list:
        return tuple([_shape(n, flips) for n in node])
    if kind is ast.Name:
        return "_"
    if kind is ast.Attribute:
        if node.attr in ("inputs", "outputs") and node.value.__class__ is ast.Name:
            return "_"  # op.inputs -> [a, b]
        if _is_compat_v1(node.value):  # a TF1-only name respelled for TF2:
            return ("Attribute", _shape(node.value.value.value, flips), node.attr,
                    _shape(node.ctx, flips))  # `tf.compat.v1.X` is TF1's `tf.X`
    elif kind is ast.List:
        if node.elts and all(e.__class__ is ast.Name for e in node.elts):
            return "_"
    elif kind is ast.Subscript:
        if isinstance(node.value, ast.Attribute) and node.value.attr in ("inputs", "outputs"):
            return "_"
    elif kind is ast.BinOp:  # `a * b` wrapped in its custom-gradient function: `f(a, b)`
        return ("Call", "_", (_shape(node.left, flips), _shape(node.right, flips)), ())
    elif not isinstance(node, ast.AST):
        return node
    if isinstance(node, ast.Call):
        flip = flips and isinstance(node.func, ast.Attribute) and node.func.attr == RUNTIME_FLIP
        args = node.args[:1] if flip else node.args
        keywords = [k for k in node.keywords if k.arg != "name"]  # an op's `name=` moves into its custom gradient
        if isinstance(node.func, ast.Attribute) and node.func.attr == MARKER:
            keywords = [k for k in keywords if k.arg != "graph"]  # the runtime's map takes the graph it replaces
        if flips and isinstance(node.func, ast.Attribute) and node.func.attr == RUNTIME_PY_FUNC:
            keywords = [k for k in keywords if k.arg not in ("grad", "override_types")]  # the map's registration
        # the values in order, not the keywords' names: a moved call may take TF2's keyword for an
        # argument (`keep_dims=` -> `keepdims=`, a positional one TF2 orders otherwise written by name)
        return ("Call", "_", _shape([*args, *(k.value for k in keywords)], flips), ())
    return (kind.__name__, *[_shape(getattr(node, f, None), flips) for f in node._fields if f not in skip])
