"""Gather and decide: every gradient registration and override site of a module, with the facts
about them (what each name means: bindings.py, gathered in the same walk), and per site whether
the rewrite provably keeps TF1's gradients, or the coded refusal that says why not: the idioms'
rules decide (idioms/__init__.py). No node is changed here."""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterable, Mapping
from types import MappingProxyType
from typing import Callable

import libcst as cst

from ..knowledge import ops
from ..report import Diagnostic
from . import facts, idioms, precheck
from .bindings import COMPREHENSION_LATE, Bindings
from .idioms.contract import Facts, NodeT, T
from .nodes import code_of, is_map_call, is_runtime_receiver, star_exports, string_value
from .safety import Span
from .scopes import Assignment, BaseAssignment, ImportAssignment, Scope
from .sites import Registration, Site, regs_of
from .traversal import NodeMap, Positions, QuickVisitor, Recorded, indent_of, record_walk
from .verdicts import Refusal


class Collector(QuickVisitor):
    def __init__(self) -> None:
        self.bindings = Bindings()  # scopes, bindings and reads, gathered in this walk
        self.withs: list[tuple[cst.With, cst.WithItem]] = []
        self.map_calls: list[cst.Call] = []
        self.name_withs: list[tuple[cst.With, cst.WithItem]] = []
        self.map_refs: list[cst.Attribute] = []  # every `<expr>.gradient_override_map`, called or not
        self.private_refs: list[cst.Attribute] = []  # `g._gradient_override_map`: TF's private dict
        self.name_calls: list[cst.Call] = []  # f(...) with a bare name: wrappers named like the API
        self.map_aliases: set[str] = {precheck.MARKER}  # `from m import gradient_override_map as gom`
        # attr -> the values of every `<expr>.attr = value` target (None: augmented)
        self.attr_values: dict[str, list[cst.BaseExpression | None]] = {}
        self.defs: list[cst.FunctionDef] = []
        self.exprs: list[cst.SimpleStatementLine] = []
        self.names: set[str] = set()
        # what libcst's ParentNodeProvider gives, from this one pass (its own pass costs ~20% of a file)
        self.parents = NodeMap()
        self.order = NodeMap()  # pre-order index: which of two nodes starts first
        self.nodes: list[cst.CSTNode] = []  # in that order (layout left out: traversal.TRIVIA)
        self.lines: list[int] = []  # the line breaks written before each of them
        self.ends: list[int] = []  # where each one's subtree ends in them
        self.closes: list[int] = []  # the line breaks written up to the end of each one's text
        self._late: list[int] | None = None  # the indices of the nodes whose fields the walk reordered

    def walk(self, node: cst.CSTNode) -> None:
        """The one walk over the module: each node's order, parent and bindings, then its hook; a
        comprehension's `for` is read before its element, as scope analysis reads it."""
        record_walk(self, node, self.order.by_id, self.nodes, self.lines, self.parents.by_id, self.bindings.enter,
                    self.bindings.leave, COMPREHENSION_LATE, self.ends, self.closes)

    def subtree(self, node: cst.CSTNode) -> Recorded | None:
        """``node`` and the nodes under it but layout, in libcst's order (what a QuickVisitor's walk
        meets), from the walk's record; None where the walk did not record ``node`` or read a
        comprehension under it out of that order."""
        i = self._index(node)
        if i is None:
            return None
        end = self.ends[i]
        if self._late is None:  # found once, in a module that asks (most are refused or left alone first)
            self._late = [j for j, n in enumerate(self.nodes) if n.__class__ in COMPREHENSION_LATE]
        k = bisect.bisect_left(self._late, i)
        if k < len(self._late) and self._late[k] < end:
            return None
        return Recorded(self.nodes, self.ends, i, end)

    def breaks_before(self, node: cst.CSTNode) -> int:
        """The line breaks the module's code writes before ``node``'s (a node the walk recorded)."""
        return self.lines[self.order[node]]

    def breaks_through(self, node: cst.CSTNode) -> int:
        """The line breaks the module's code writes up to the end of ``node``'s (a node the walk
        recorded): a statement's text is the lines from ``breaks_before`` to here."""
        return self.closes[self.order[node]]

    def span(self, statement: cst.CSTNode, default_indent: str) -> Span | None:
        """Where the module has ``statement`` (a line of its own, or a compound statement, in a
        block), as the safety net finds it in the module's ``ast``; None for one the walk did not
        record, one that is decorated (ast starts it at its ``def``), or a node of another kind."""
        if (not isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
                or (isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.decorators)
                or self._index(statement) is None):
            return None
        if not isinstance(self.parents.get(statement), (cst.IndentedBlock, cst.Module)):
            return None
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        return Span(1 + self.breaks_before(statement) + len(statement.leading_lines),
                    len(indent_of(statement, self.parents, default_indent)), self.breaks_through(statement), count,
                    lambda: code_of(statement))

    def size(self, node: cst.CSTNode) -> int:
        """How many nodes (layout left out) the walk recorded in ``node``'s subtree, itself
        included; 0 for a node it did not record (a new one)."""
        i = self._index(node)
        return 0 if i is None else self.ends[i] - i

    def _index(self, node: cst.CSTNode) -> int | None:
        """``node``'s index in the walk's record; None for a node it did not record (a new one,
        or a copy: an id may be reused once its node is gone)."""
        i = self.order.by_id.get(id(node))
        return i if i is not None and self.nodes[i] is node else None

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if is_map_call(item.item):
                self.withs.append((node, item))
            elif isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Name):
                self.name_withs.append((node, item))

    def visit_Call(self, node: cst.Call) -> None:
        if is_map_call(node):
            self.map_calls.append(node)
        elif isinstance(node.func, cst.Name):
            self.name_calls.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == precheck.MARKER:
            if not is_runtime_receiver(node):
                self.map_refs.append(node)
        elif node.attr.value == precheck.PRIVATE:
            self.private_refs.append(node)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        asname = node.asname.name if node.asname is not None else None
        if isinstance(asname, cst.Name) and isinstance(node.name, cst.Name) and node.name.value == precheck.MARKER:
            self.map_aliases.add(asname.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute):
                self.attr_values.setdefault(target.target.attr.value, []).append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Attribute):
            self.attr_values.setdefault(node.target.attr.value, []).append(None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Attribute):
            self.attr_values.setdefault(node.target.attr.value, []).append(node.value)

    def wrapper_calls(self) -> list[cst.Call]:
        """Calls of a bare name that is, or is imported as, ``gradient_override_map``: a wrapper
        (lucid's, a project helper) whose overrides TF2 ignores just the same."""
        return [c for c in self.name_calls if isinstance(c.func, cst.Name) and c.func.value in self.map_aliases]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.decorators:
            self.defs.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) == 1 and isinstance(node.body[0], cst.Expr):
            self.exprs.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


class RuleFacts:
    """What the rules read of a module (idioms.contract.Facts): the planner's answers, and its
    records as tuples; a rule decides by what it returns, and only the planner writes."""

    def __init__(self, planner: Planner):
        self._planner = planner
        collector = planner.collector
        self.module, self.source, self.use_runtime, self.links = (
            planner.module, planner.source, planner.use_runtime, planner.links)
        self.withs, self.map_calls, self.name_withs = (
            tuple(collector.withs), tuple(collector.map_calls), tuple(collector.name_withs))
        self.name_calls = tuple(collector.name_calls)
        self.map_refs, self.private_refs, self.defs, self.exprs, self.nodes = (
            tuple(collector.map_refs), tuple(collector.private_refs), tuple(collector.defs),
            tuple(collector.exprs), tuple(collector.nodes))
        self.attr_values: Mapping[str, list[cst.BaseExpression | None]] = MappingProxyType(collector.attr_values)
        self._ends = tuple(collector.ends)
        self._by_type: dict[type, list[int]] = {}  # type -> its nodes' indices, for the types asked for

    @property
    def registrations(self) -> tuple[Registration, ...]:
        return tuple(self._planner.registrations)

    @property
    def sites(self) -> tuple[Site, ...]:
        return tuple(self._planner.sites)

    @property
    def loose_calls(self) -> tuple[cst.Call, ...]:
        return tuple(self._planner.loose_calls)

    @property
    def moved(self) -> frozenset[cst.Call]:
        return frozenset(self._planner.moved)

    # the planner's answers (each documented there)
    def qn(self, node: cst.CSTNode | None, raw: bool = False) -> set[str]:
        return self._planner.qn(node, raw)

    def pos(self, node: cst.CSTNode) -> tuple[int, int]:
        return self._planner.pos(node)

    def where(self, node: cst.CSTNode | None) -> int:
        return self._planner.where(node)

    def subtree(self, node: cst.CSTNode) -> Recorded | None:
        found = self._planner.subtree(node)
        return None if found is None else found._replace(nodes=self.nodes, ends=self._ends)

    def referents(self, name: cst.Name) -> list[BaseAssignment]:
        return self._planner.referents(name)

    def simple_assign_value(
            self, assignment: BaseAssignment) -> tuple[cst.SimpleStatementLine, cst.BaseExpression] | None:
        return self._planner.simple_assign_value(assignment)

    def bound_value(self, name: cst.Name) -> cst.BaseExpression | None:
        return self._planner.bound_value(name)

    def key(self, expr: cst.BaseExpression) -> tuple | None:
        return self._planner.key(expr)

    def function_def_for(self, name: cst.Name) -> cst.FunctionDef | None:
        return self._planner.function_def_for(name)

    def is_graph(self, receiver: cst.BaseExpression) -> bool:
        return self._planner.is_graph(receiver)

    def quiet(self, expr: cst.BaseExpression) -> bool:
        return self._planner.quiet(expr)

    def handed_on(self, name: str) -> bool:
        return self._planner.handed_on(name)

    def parent(self, node: cst.CSTNode | None) -> cst.CSTNode | None:
        return self._planner.parents.get(node)

    def of_type(self, kind: type[NodeT], *more: type[NodeT]) -> list[NodeT]:
        """The walk's nodes of these concrete types, in its order: each type's found once per
        module, as an ``isinstance`` over every node costs a Python call each (libcst's nodes
        are ABCs). Only a type no class derives from: an exact type is an instance check."""
        kinds = (kind, *more)
        assert not any(k.__subclasses__() for k in kinds), kinds
        for k in kinds:
            if k not in self._by_type:  # a few types are asked for: each found in one pass of its own
                self._by_type[k] = [i for i, node in enumerate(self.nodes) if node.__class__ is k]
        found = [i for k in kinds for i in self._by_type[k]]
        return [self.nodes[i] for i in (sorted(found) if more else found)]  # type: ignore[misc]  # the nodes of those types

    def scope(self, node: cst.CSTNode | None) -> Scope | None:
        return self._planner.scopes.get(node)

    def external(self, spelling: str) -> facts.External | None:
        return self._planner.externals.get(spelling)

    def wrapper_calls(self) -> list[cst.Call]:
        return self._planner.collector.wrapper_calls()

    def own(self, idiom: str) -> tuple:
        """The records of ``idiom``'s own kind (``Gathered.own``)."""
        return tuple(self._planner.own.get(idiom, ()))

    def is_map_call(self, call: cst.CSTNode | None) -> bool:
        """Whether ``call`` is a ``gradient_override_map(...)`` call (or a wrapper's)."""
        return call in self._planner.map_call_set

    def spell(self, value: str, text: str) -> None:
        """Note how the source first wrote the literal ``value`` (a fact of the text, kept once)."""
        self._planner.spelling.setdefault(value, text)

    def spelled(self, value: str) -> str:
        return self._planner.spelling[value]

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, once per key for the module (a rule's own derived facts)."""
        memos = self._planner.memos
        if key not in memos:
            memos[key] = compute()
        return memos[key]


class Planner:
    """Gather first, decide second: no node is changed here. The rules read the module through
    ``self.facts`` and return their findings; the planner records them."""

    def __init__(self, module: cst.Module, links: facts.Links | None = None, source: str = "",
                 use_runtime: bool = False):
        self.use_runtime = use_runtime  # model-wide blocks may move onto the runtime map (idioms/runtime_map)
        self.links = links or facts.Links()
        self.source = source  # the module text (only read for notes)
        self.externals = {e.spelling: e for e in self.links.externals}
        self.module = module
        # One walk gathers every fact below (scopes and bindings included); qualified names are
        # asked only of the few nodes that need them, positions only where a diagnostic needs one.
        collector = Collector()
        collector.walk(self.module)
        self.scopes = collector.bindings.finish()
        self._positions: Positions | None = None
        self.line_of = lambda line: line  # a slice's lines are mapped to the whole module's
        self.diagnostics: list[Diagnostic] = []
        self.collector = collector
        self.parents = collector.parents
        self.module_names = set(collector.names)
        self.map_call_set = set(collector.map_calls) | set(collector.wrapper_calls())
        self.registrations: list[Registration] = []
        self.spelling: dict[str, str] = {}  # a target name's literal values, as the source wrote them
        self.sites: list[Site] = []
        self.own: dict[str, list] = {}  # idiom -> the records of its own kind (Gathered.own)
        self.memos: dict = {}  # the rules' own derived facts (RuleFacts.memo)
        self.loose_calls: list[cst.Call] = []  # `ctx = g.gradient_override_map(m)`: entered by hand, if at all
        self.taken: dict = {}  # --use-runtime: per runtime rule (idioms.runtime_rules), what it took (a Taken)
        self.moved: set = set()  # the map calls those rules moved
        self.runtime_registrations: list[Registration] = []  # kept for the blocks on the runtime map
        self._all: set | bool | None = None  # the names `import *` hands on (True: every public one)
        self._qn: dict = {}  # id(node) -> (node, its qualified names, canonical ones): the rules ask again
        self.facts: Facts = RuleFacts(self)  # what the rules read

    # -- helpers ---------------------------------------------------------------------------
    def qn(self, node: cst.CSTNode | None, raw: bool = False) -> set[str]:
        known = self._qn.get(id(node))
        if known is None or known[0] is not node:  # asked before (the node is held: its id is its own)
            scope = self.scopes.get(node)
            names = frozenset(scope.qualified_names(node)) if scope is not None else frozenset()
            canonical = frozenset(ops.canonical(name) for name in names) if names else names
            known = self._qn[id(node)] = (node, names, canonical)
        return set(known[1] if raw else known[2])

    def pos(self, node: cst.CSTNode) -> tuple[int, int]:
        if self._positions is None:
            self._positions = Positions(self.module, self.parents, self.collector.breaks_before)
        line, column = self._positions.start(node)
        return self.line_of(line), column + 1

    def referents(self, name: cst.Name) -> list:
        """The bindings ``name`` may read, in source order."""
        scope = self.scopes.get(name)
        if scope is None:
            return []
        access = scope.access_of(name)
        return access.referents if access is not None else []

    def simple_assign_value(
            self, assignment: BaseAssignment) -> tuple[cst.SimpleStatementLine, cst.BaseExpression] | None:
        """For ``name = <value>`` (one target, alone on its line): (statement, value)."""
        if not isinstance(assignment, Assignment) or isinstance(assignment, ImportAssignment):
            return None
        target = self.parents.get(assignment.node)
        assign = self.parents.get(target) if isinstance(target, cst.AssignTarget) else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or target.target is not assignment.node:
            return None
        stmt = self.parents.get(assign)
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        return stmt, assign.value

    def quiet(self, expr: cst.BaseExpression) -> bool:
        """Whether evaluating ``expr`` can do nothing but compute a value (literals, names,
        attributes, operators, and calls of ops.QUIET_CALLS / string methods), so an assignment of
        it whose every use the rewrite removed can go too."""
        if isinstance(expr, (cst.Name, cst.BaseNumber, cst.SimpleString, cst.Ellipsis)):
            return True
        if isinstance(expr, cst.ConcatenatedString):
            return self.quiet(expr.left) and self.quiet(expr.right)
        if isinstance(expr, cst.FormattedString):
            return all(self.quiet(p.expression) for p in expr.parts if isinstance(p, cst.FormattedStringExpression))
        if isinstance(expr, cst.Attribute):
            return self.quiet(expr.value)
        if isinstance(expr, cst.Subscript):
            return self.quiet(expr.value) and all(
                isinstance(e.slice, cst.Index) and self.quiet(e.slice.value) for e in expr.slice)
        if isinstance(expr, cst.BinaryOperation):
            return self.quiet(expr.left) and self.quiet(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self.quiet(expr.expression)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return all(isinstance(e, cst.Element) and self.quiet(e.value) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            return all(isinstance(e, cst.DictElement) and self.quiet(e.key) and self.quiet(e.value)
                       for e in expr.elements)
        if isinstance(expr, cst.Call):
            args = all(a.star == "" and self.quiet(a.value) for a in expr.args)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ops.QUIET_METHODS:
                return args and self.quiet(expr.func.value)
            return args and bool(self.qn(expr.func) & ops.QUIET_CALLS)
        return False

    def bound_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of ``name`` when its one binding is a plain ``name = value`` line."""
        refs = self.referents(name)
        if len(refs) != 1:
            return None
        found = self.simple_assign_value(refs[0])
        return found[1] if found else None

    def key(self, expr: cst.BaseExpression) -> tuple | None:
        """What identifies a gradient name expression, so a registration and a use match: a string
        value; the bindings a name may read (each by its name and where it and its scope start in
        the module); an expression's code in its scope. Plain data, the same for the same text."""
        value = string_value(expr)
        if value is not None:
            return ("str", value)
        if isinstance(expr, cst.Name):
            bound = self.bound_value(expr)
            if isinstance(bound, (cst.SimpleString, cst.ConcatenatedString)):
                return self.key(bound)
            refs = self.referents(expr)
            if refs:
                return ("var", frozenset((r.name, self.where(getattr(r, "node", None)), self.where_scope(r.scope))
                                         for r in refs))
            return None
        return ("expr", self.where_scope(self.scopes.get(expr)), code_of(expr))

    def handed_on(self, name: str) -> bool:
        """Whether ``from this_module import *`` hands ``name`` on: a public name, where the module
        has no ``__all__`` or one that lists it (or one the tool cannot read)."""
        if self._all is None:
            self._all = star_exports(self.module)
        exported = self._all
        return not name.startswith("_") if exported is True else isinstance(exported, set) and name in exported

    def where(self, node: cst.CSTNode | None) -> int:
        """A node's pre-order index in the module (-1: none, or not in it)."""
        return self.collector.order.get(node, -1)

    def subtree(self, node: cst.CSTNode) -> Recorded | None:
        """``node``'s subtree as the one walk recorded it (Collector.subtree), or None."""
        return self.collector.subtree(node)

    def where_scope(self, scope: Scope | None) -> int:
        return self.where(getattr(scope, "node", None))  # the module's and builtins' scopes have no node

    def function_def_for(self, name: cst.Name) -> cst.FunctionDef | None:
        refs = self.referents(name)
        if len(refs) != 1:
            return None
        ref = refs[0]
        if isinstance(ref, Assignment) and isinstance(ref.node, cst.FunctionDef):
            return ref.node
        return None

    def is_graph(self, receiver: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``receiver`` is provably a ``tf.Graph``: ``<expr>.graph`` (``x.graph``,
        ``sess.graph``, ``K.get_session().graph``), ``tf.get_default_graph()``, ``tf.Graph()``, a
        name bound to one of these (also ``with tf.Graph().as_default() as g``), or an attribute
        (``self.G``) every assignment of which in this module is one of these. A name counts when every
        binding that reaches it is one of these (``g = tf.get_default_graph()`` in two branches)."""
        if isinstance(receiver, cst.Attribute):
            name = receiver.attr.value
            if name == "graph":
                return True
            values = self.collector.attr_values.get(name, [])
            return bool(values) and name not in seen and all(
                v is not None and self.is_graph(v, seen | {name}) for v in values)
        if isinstance(receiver, cst.Call):
            func = self.qn(receiver.func)
            if func & ops.DEFAULT_GRAPH or func & ops.GRAPH_CLASS:
                return True
            return (isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value == "as_default"
                    and self.is_graph(receiver.func.value, seen))
        if isinstance(receiver, cst.Name):
            refs = self.referents(receiver)
            return bool(refs) and all(self._binds_graph(ref, seen) for ref in refs)
        return False

    def _binds_graph(self, ref: BaseAssignment, seen: frozenset[str]) -> bool:
        found = self.simple_assign_value(ref)
        if found is not None:
            return self.is_graph(found[1], seen)
        as_name = self.parents.get(ref.node) if isinstance(ref, Assignment) else None
        item = self.parents.get(as_name)
        return isinstance(as_name, cst.AsName) and isinstance(item, cst.WithItem) and self.is_graph(item.item, seen)

    # -- decide ----------------------------------------------------------------------------
    def decide(self) -> list[Site]:
        """Gather (the registrations, then the blocks), check each block, let refusals spread, move
        refused blocks onto the runtime (``--use-runtime``), then report: each step is the rules
        the idioms declare (idioms/__init__.py); the planner alone records what they return. The
        blocks the rewrite may take."""
        facts = self.facts
        for rule in idioms.rules("gather"):
            found = rule(facts)
            self.registrations += found.registrations
            self.sites += found.sites
            self.loose_calls += found.loose_calls
            if found.own:
                self.own.setdefault(idioms.idiom_of(rule).name, []).extend(found.own)
            self.diagnostics += found.diagnostics
            self.give(found.verdicts)
        for site in self.sites:
            site.refusal = None  # the first check that refuses the block decides
            for check in idioms.rules("check_site"):
                checked = check(facts, site)
                site.entries.extend(checked.entries)
                site.calls.extend(checked.calls)
                site.phantoms.extend(checked.phantoms)
                site.unmade.extend(checked.unmade)
                if checked.refusal:
                    site.refusal = checked.refusal
                    break
        self.settle()
        for runtime in idioms.runtime_rules() if self.use_runtime else ():  # refused blocks, onto the runtime
            while True:
                taken = runtime.take(facts)
                newly = [(reg, taken.keep) for reg in taken.kept if reg.refusal is None]
                if not newly:
                    break
                self.give(newly)  # their other blocks are refused, so the rule may take those too
                self.settle()
            self.taken[runtime.name] = taken
            self.moved.update(runtime.calls(taken))
        for finish in idioms.rules("finish"):
            self.diagnostics += finish(facts)
        return [s for s in self.sites if not s.refusal]

    def accepted_own(self) -> dict[str, list]:
        """Per idiom, its own records no verdict refused."""
        return {idiom: [r for r in records if r.refusal is None] for idiom, records in self.own.items()}

    @staticmethod
    def give(verdicts: Iterable[tuple[Registration | Site, Refusal | None]]) -> bool:
        """Each (record, Refusal) pair's refusal to its record, unless it has one: whether any was given."""
        given = False
        for record, refusal in verdicts:
            if record.refusal is None:
                record.refusal = refusal
                given = True
        return given

    def settle(self) -> None:
        """Refusals spread until nothing changes: a block using a refused registration, and what
        the settle rules spread (a registration with a refused use, one module's blocks using
        another's registration, a maker among a name's choices)."""
        changed = True
        while changed:
            changed = False
            for site in self.sites:
                if site.refusal:
                    continue
                bad = next((r for _, t in site.entries for r in regs_of(t) if r.refusal), None)
                if bad is not None:
                    site.refusal = bad.refusal
                    changed = True
            for rule in idioms.rules("settle"):
                settled = rule(self.facts)
                for reg in settled.makers:
                    reg.maker = True
                for reg in settled.named:
                    reg.maker_name = True
                changed = self.give(settled.verdicts) or bool(settled.makers or settled.named) or changed
