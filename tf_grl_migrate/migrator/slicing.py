"""The slice of a module the analysis needs: libcst's parse and scope analysis cost 10-20x what
CPython's own parser does, and a long module usually holds one override among hundreds of
functions that cannot bear on it. Those are set aside before libcst sees the module and put back,
byte for byte, into the rewritten text. (Why: docs/design.md, "migrator/slicing.py".)"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import ops
from .precheck import MARKER, PRIVATE, first_line, last_line, statement_text, walk

# What marks code the analysis reads: an override's words, and a layer's weight lists, which the
# Keras rules respell anywhere in a migrated module (idioms/keras_layer): a def or class that
# mentions one is kept, and so is one that reads a name an import mentioning one binds.
_SEED = re.compile(r"gradient|override|Defun|trainable_weights", re.IGNORECASE)
# An import of Keras's backend (``K``): a backend function Keras 3 lacks (``K.flatten``), called
# anywhere, moves it to tf.keras (idioms/keras_layer). Code set aside that calls one hands the rule
# that call in its stub line; code where it would get a note (Keras 3 and tf.keras both lack it),
# or that binds ``K`` itself, is kept.
_BACKEND = re.compile(r"keras.*backend|backend.*keras", re.DOTALL)
_MARKERS = (MARKER, PRIVATE)
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
MIN_LINES = 200  # below this the whole module is analysed: the slice would save little
# Finding the slice walks the whole module (about a fifth of libcst's parse); where the defs and
# classes that could be set aside hold less than this share of its lines, the slice cannot save
# much more than that, and seldom does (their helpers are kept with them): the module is analysed
MIN_SHARE = 0.25  # whole.


@dataclass
class _Unit:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    index: int  # among the module's statements
    first: int  # 1-based, decorators included
    last: int
    mentions: set = field(default_factory=set)  # every identifier (attributes, parameters, ...)
    bare: set = field(default_factory=set)  # names read or written as names (what a global can be)
    binds: set = field(default_factory=set)  # names it may bind at module level
    attributes: set = field(default_factory=set)  # attribute names it assigns
    loads: set = field(default_factory=set)  # names it reads
    dotted: set = field(default_factory=set)  # (name, attribute) of each `name.attribute` it reads
    local: set = field(default_factory=set)  # names it binds anywhere inside (over-approximated)
    carried: list = field(default_factory=list)  # `K.flatten`: the Keras backend calls its stub hands on
    pinned: bool = False  # kept whatever else: a Keras rule reads it where it is
    kept: bool = True


@dataclass
class Slice:
    code: str  # the module with elided runs replaced by stub lines
    taken: set  # every identifier of the elided code
    _stubs: list  # (stub line without terminator, original text of the run with terminator)
    _shifts: list  # (first line in the slice after a stub, lines to add from there on)

    def line(self, line: int) -> int:
        """The original line of a line of the slice."""
        add = 0
        for start, extra in self._shifts:
            if line >= start:
                add = extra
        return line + add

    def expand(self, new: str) -> str | None:
        """The rewritten slice with the elided text put back; None when a stub did not come back
        exactly once at the start of a line, as it was."""
        for stub, original in self._stubs:
            found = [m.start() for m in re.finditer(re.escape(stub) + r"(\r\n|\r|\n|\Z)", new)]
            if len(found) != 1 or (found[0] > 0 and new[found[0] - 1] not in "\r\n"):
                return None
            start = found[0]
            end = start + len(stub)
            terminator = _line_break_at(new, end)
            new = new[:start] + original + new[end + len(terminator):]
        return new


def _names(node: ast.AST, unit: _Unit | None = None, nodes: list[ast.AST] | None = None) -> tuple[set, set]:
    """(identifiers, bare names) anywhere under node. With ``unit`` (a top-level def or class), the
    same walk also gathers into it what it may bind at module level (``global`` names, walrus
    targets), the attributes it assigns and the names it reads. ``nodes``: every node under
    ``node`` (``ast.walk``'s), where the caller has them."""
    names, bare = set(), set()
    for n in walk(node) if nodes is None else nodes:
        if isinstance(n, ast.Name):
            names.add(n.id)
            bare.add(n.id)
            if unit is not None:
                (unit.loads if isinstance(n.ctx, ast.Load) else unit.local).add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
            if unit is not None:
                if isinstance(n.ctx, ast.Store):
                    unit.attributes.add(n.attr)
                if isinstance(n.value, ast.Name):
                    unit.dotted.add((n.value.id, n.attr))
        elif type(n) in _DECLARING:
            declared = _declared(n)
            names.update(declared)
            if unit is not None:
                unit.local.update(declared)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
            bare.update(n.names)
            if unit is not None and isinstance(n, ast.Global):
                unit.binds.update(n.names)
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name) and unit is not None:
            unit.binds.add(n.target.id)  # the last branch: nothing below it to fall through to
    return names, bare


# the nodes that declare a name of their own (a parameter, a keyword, a def, an import, an
# `except ... as`, a match capture): what each declares, in _declared
_DECLARING = frozenset({ast.arg, ast.keyword, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias,
                        ast.ExceptHandler, *(getattr(ast, n) for n in ("MatchAs", "MatchStar") if hasattr(ast, n))})


def _declared(n: Any) -> list:  # an ast node that declares names: arg, alias, keyword, def or class
    if isinstance(n, ast.arg):
        return [n.arg]
    if isinstance(n, ast.alias):
        return [*n.name.split("."), *([n.asname] if n.asname else [])]
    found = n.arg if isinstance(n, ast.keyword) else n.name
    return [found] if found else []


def module_binds(stmt: ast.stmt) -> set:
    """Names a top-level statement may bind at module level (over-approximated: every global and
    walrus anywhere in it counts)."""
    out = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            for inner in walk(n):
                if isinstance(inner, ast.Global):
                    out.update(inner.names)
                elif isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                    out.add(inner.target.id)
            continue  # its own names are local to it
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= _imported(n)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _unit_facts(unit: _Unit) -> None:
    """A top-level def or class, in one walk: every identifier, the bare names, what it may bind at
    module level (its name, ``global`` names, walrus targets), the attributes it assigns, the names
    it reads."""
    unit.binds.add(unit.node.name)
    unit.mentions, unit.bare = _names(unit.node, unit)


def _receivers(nodes: Iterable[ast.AST]) -> set:
    """Identifiers in the receivers of ``X.gradient_override_map`` among ``nodes`` (what may hold the graph)."""
    out = set()
    for n in nodes:
        if isinstance(n, ast.Attribute) and n.attr in _MARKERS:
            out |= _names(n.value)[0]
    return out


def _assignments(nodes: Iterable[ast.AST]) -> list:
    return [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None]


def _feeds(assignments: list, receivers: set) -> set:
    """Identifiers in values assigned (by ``assignments``) to a name or attribute among the receivers."""
    out = set()
    for n in assignments:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        hit = {t.id if isinstance(t, ast.Name) else t.attr for target in targets for t in walk(target)
               if isinstance(t, (ast.Name, ast.Attribute))}
        if hit & receivers:
            out |= _names(n.value)[0]
    return out


def _values(nodes: Iterable[ast.AST]) -> set:
    """Bare names used other than as the function of a call (``MAP``, ``G``, a gradient function
    passed to ``RegisterGradient(...)``): their other uses matter; a helper only called does not."""
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    out = {n.id for n in nodes if isinstance(n, ast.Name) and id(n) not in called}
    for n in nodes:
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return out


def _imported(stmt: ast.Import | ast.ImportFrom) -> set:
    if isinstance(stmt, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in stmt.names}
    return {a.asname or a.name for a in stmt.names if a.name != "*"}


def _line_break_at(text: str, i: int) -> str:
    """The line break starting at ``text[i]`` (``\r\n``, ``\r`` or ``\n``), or ""."""
    return "\r\n" if text.startswith("\r\n", i) else text[i:i + 1] if text[i:i + 1] in ("\r", "\n") else ""


def _backend_reads(unit: _Unit, backend: set) -> None:
    """What the Keras rules read of ``unit`` through ``backend``, the names an import of Keras's
    backend binds: a call of what Keras 3 lacks and tf.keras has goes into its stub; one neither
    has (a note at its line), or one through a name it binds itself, keeps it."""
    for name, attr in unit.dotted:
        if name not in backend:
            continue
        fate = ops.keras_backend_lacks(attr)
        if fate is None:
            continue
        if fate == "gone" or name in unit.local:
            unit.pinned = True
        else:
            unit.carried.append(f"{name}.{attr}")


def _imports_read(imports: list, units: list[_Unit], lines: list) -> set:
    """The names imports that mention gradients bind (aliases of the API: every use counts); for an
    import of Keras's backend, what the Keras rules read through it in each unit (_backend_reads)."""
    core: set = set()
    for stmt in imports:
        text = statement_text(stmt, lines)
        if _SEED.search(text):
            core |= _imported(stmt)
        elif _BACKEND.search(text):
            for unit in units:
                _backend_reads(unit, _imported(stmt))
    return core


def _candidate_units(body: list, lines: list) -> list[_Unit]:
    """The top-level defs and classes that may be set aside: on lines of their own, from column 0,
    and mentioning no gradient; none where they hold under ``MIN_SHARE`` of the lines."""
    units: list[_Unit] = []
    for i, stmt in enumerate(body):
        if not isinstance(stmt, _UNITS):
            continue
        first, last = first_line(stmt), last_line(stmt)
        shares = (i > 0 and last_line(body[i - 1]) >= first) or (
            i + 1 < len(body) and first_line(body[i + 1]) <= last)
        if shares or _SEED.search(statement_text(stmt, lines)) or not lines[first - 1][:1].strip():
            continue  # kept: sharing a line, mentioning gradients, or not starting at column 0
        units.append(_Unit(stmt, i, first, last, kept=False))
    if sum(u.last - u.first + 1 for u in units) < MIN_SHARE * len(lines):
        return []  # too few to pay for the slice
    for unit in units:
        _unit_facts(unit)
    return units


def _kept_facts(kept: list, lines: list) -> tuple:
    """What the statements kept read and bind: (mentions: bare names code that mentions
    gradients reads or writes; core: what those statements bind; receivers: names an override
    reads a graph or map from; seen: names they use as values; bound: what kept code binds;
    plain: (binds, bare names) of each other statement, whose names count once;
    assignments: per statement, the assignments in it, which may feed a receiver)."""
    mentions: set = set()
    core: set = set()
    receivers: set = set()
    seen: set = set()
    bound: set = set()
    plain: list = []  # other kept statements (`if __name__ == "__main__": main()`)
    assignments: list = []
    for stmt in kept:  # they bind a name that counts (a map or graph an override reads)
        nodes = list(walk(stmt))
        bare, binds = _names(stmt, nodes=nodes)[1], module_binds(stmt)
        receivers |= _receivers(nodes)
        assignments.append(_assignments(nodes))
        bound |= binds
        if _SEED.search(statement_text(stmt, lines)):
            core |= binds
            seen |= _values(nodes)
            mentions |= bare
        else:
            plain.append((binds, bare))
    return mentions, core, receivers, seen, bound, plain, assignments


def _grown(receivers: set, assignments: list) -> set:
    """The receivers, with every name they were assigned from (which may hold the graph too)."""
    while True:
        more = set().union(*(_feeds(a, receivers) for a in assignments)) - receivers
        if not more:
            return receivers
        receivers = receivers | more


def slice_module(code: str, tree: ast.Module) -> Slice | None:
    """The slice, or None when nothing can be set aside (or the module is short)."""
    lines = code.splitlines(keepends=True)
    if "__grl_elided_" in code:
        return None
    if len(lines) < MIN_LINES or len(lines) != code.count("\n") + (not code.endswith("\n")):
        return None  # short, or line breaks other than \n that Python and str.splitlines count apart
    body = tree.body
    units = _candidate_units(body, lines)
    if not units:
        return None
    elided_ids = {id(u.node) for u in units}
    imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
    imported = set().union(*(_imported(s) for s in imports)) if imports else set()
    # mentions: bare names kept code reads or writes; core: what statements that mention gradients bind
    kept = [s for s in body if id(s) not in elided_ids and not isinstance(s, (ast.Import, ast.ImportFrom))]
    mentions, core, receivers, seen, bound, plain, assignments = _kept_facts(kept, lines)
    mentions |= imported
    core |= seen & bound  # a module-level map, name or graph an override uses: every use counts
    core |= _imports_read(imports, units, lines)
    receivers = _grown(receivers, assignments) if kept else receivers
    changed = True
    while changed:
        changed = False
        for entry in [e for e in plain if e[0] & mentions]:
            plain.remove(entry)
            mentions |= entry[1]
            changed = True
        for unit in units:
            if not unit.kept and (unit.pinned or unit.binds & mentions or unit.attributes & receivers
                                  or unit.bare & core):
                unit.kept = True
                changed = True
                mentions |= unit.bare
                core |= unit.binds & seen  # bound here (a `global`), used by an override: every use counts
                bound |= unit.binds
                receivers |= _feeds(_assignments(walk(unit.node)), receivers)
                kept.append(unit.node)
    elided = [u for u in units if not u.kept]
    if not elided:
        return None
    # a stub reads what its run read of the names kept code binds, so none of them looks dead
    visible = imported | bound
    runs: list[list[_Unit]] = []  # elided units next to each other (only blank lines and comments between) are one run
    for unit in elided:
        if runs and runs[-1][-1].index + 1 == unit.index:
            runs[-1].append(unit)
        else:
            runs.append([unit])
    out, stubs, shifts, taken = [], [], [], set()
    cursor, removed, out_lines = 1, 0, 0
    for n, run in enumerate(runs):
        first, last = run[0].first, run[-1].last
        out.append("".join(lines[cursor - 1:first - 1]))
        out_lines += first - cursor
        reads = sorted(set().union(*(u.loads for u in run)) & visible)
        reads += sorted(set().union(*(u.carried for u in run)))
        stub = f"__grl_elided_{n}__ = ({', '.join(reads)}{',' if len(reads) == 1 else ''})"
        original = "".join(lines[first - 1:last])
        terminator = next((b for b in ("\r\n", "\r", "\n") if original.endswith(b)), "")
        out.append(stub + terminator)
        out_lines += 1
        stubs.append((stub, original))
        removed += last - first
        shifts.append((out_lines + 1, removed))
        for unit in run:
            taken |= unit.mentions
        cursor = last + 1
    out.append("".join(lines[cursor - 1:]))
    return Slice("".join(out), taken, stubs, shifts)
