"""Build and apply the edit plan for the sites the analysis accepted: each idiom's emit
(tf_grl_migrate.migrator.idioms) fills the plan, then the libcst transformer applies it, with the
dead-code and import edits (libcst only here and in the idioms)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Union

import libcst as cst

from ..knowledge import ops
from . import facts, idioms
from .analysis import Collector, Planner
from .imports import Imports
from .nodes import (
    INDENT,
    Statement,
    bound_name,
    code_of,
    fresh_name,
    is_docstring,
    is_import_line,
    load_names,
    name_keyword_code,
    parsed_expression,
    respelled_text,
    template_tokens,
    tight_equal,
)
from .plan import Conversion, DropItem, DropStatement, Edit, Plan, Recall
from .scopes import GlobalScope, ImportAssignment
from .sites import Dispatch, Registration, Site, regs_of
from .traversal import LINE_BREAK, NodeMap, Quick, code_for, indent_of, transform, written_tokens

_Importing = Union[cst.Import, cst.ImportFrom]


class Rewriter(Quick, cst.CSTTransformer):
    def __init__(self, plan: Plan, parents: NodeMap | None = None):
        super().__init__()
        self.plan = plan
        self.markers: dict[int, object] = {}
        self.carriers: set[int] = set()  # ids of markers that carry a dissolved block's trailing comments
        self.path = _path_to_edits(plan, parents) if parents is not None else None

    def rewrite(self, module: cst.Module) -> cst.Module:
        """``module.visit(self)``: with the path known, only the nodes the plan edits and those
        above them are walked (``transform``; every ``leave_`` here hands an untouched node back)."""
        return module.visit(self) if self.path is None else transform(module, self, self.path)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        new = self.plan.renames.get(original)
        return parsed_expression(new) if new else updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        keyword = self.plan.keywords.get(original)
        if keyword is None:
            return updated
        if updated.keyword is not None:
            return updated.with_changes(keyword=cst.Name(keyword))
        return updated.with_changes(keyword=cst.Name(keyword), equal=tight_equal())

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        ref = self.plan.op_refs.get(original)
        return cst.Name(ref) if ref else updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        build = self.plan.calls.get(original)
        return build(updated) if build else updated

    def leave_BinaryOperation(self, original: cst.BinaryOperation,
                              updated: cst.BinaryOperation) -> cst.BaseExpression:
        build = self.plan.calls.get(original)
        return build(updated) if build else updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.BaseStatement:
        if original in self.plan.removed_defs:
            return self._marker(updated)
        build = self.plan.defs.get(original)
        return build(updated) if build else updated

    def leave_With(self, original: cst.With,
                   updated: cst.With) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        items = self.plan.with_items.get(original)
        if items is None:
            return updated
        before = self.plan.before_with.get(original, [])
        kept = [it for it, orig in zip(updated.items, original.items) if orig not in items]
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new = updated.with_changes(items=kept)
            if before:
                before[0] = before[0].with_changes(leading_lines=updated.leading_lines)
                new = new.with_changes(leading_lines=())
            return cst.FlattenSentinel([*before, new])
        body = list(updated.body.body)
        comment = updated.body.header.comment if isinstance(updated.body, cst.IndentedBlock) else None
        lines = list(updated.leading_lines)
        if comment is not None:
            lines.append(cst.EmptyLine(comment=comment))
        stmts = [*before, *body, *self._carrier(updated.body)]
        stmts[0] = self._relead(stmts[0], (*lines, *stmts[0].leading_lines))
        return cst.FlattenSentinel(stmts)

    def leave_Import(self, original: cst.Import,
                     updated: cst.Import) -> cst.BaseSmallStatement | cst.RemovalSentinel:
        return self._drop_aliases(original, updated)

    def leave_ImportFrom(self, original: cst.ImportFrom,
                         updated: cst.ImportFrom) -> cst.BaseSmallStatement | cst.RemovalSentinel:
        return self._drop_aliases(original, updated)

    def _drop_aliases(self, original: _Importing, updated: _Importing) -> cst.BaseSmallStatement | cst.RemovalSentinel:
        dead = self.plan.imports.dropped.get(original)
        added = self.plan.imports.joined.get(original, []) if isinstance(original, cst.ImportFrom) else []
        if not (dead or added) or isinstance(updated.names, cst.ImportStar):
            return updated
        kept = [a for a in updated.names if bound_name(a) not in (dead or ())]
        if added:
            if kept:
                kept[-1] = kept[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            kept += [cst.ImportAlias(cst.Name(n), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                     for n in added]
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=kept)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.BaseStatement:
        if not updated.body:  # every import name on the line was dropped
            return self._marker(updated)
        if original in self.plan.removed_stmts:
            return self._marker(updated)
        replacement = self.plan.replace_stmts.get(original)
        return replacement if replacement is not None else updated

    def _carrier(self, block: cst.BaseSuite) -> list[cst.SimpleStatementLine]:
        """The comments after a dissolved block's last statement (libcst keeps them in the block's
        footer) ride on a marker, which hands them to the next statement at the new indentation."""
        footer = getattr(block, "footer", ())
        if not any(line.comment is not None for line in footer):
            return []
        carrier = self._marker(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=footer))
        self.carriers.add(id(carrier))
        return [carrier]

    def _marker(self, stmt: Statement) -> cst.SimpleStatementLine:
        # A removed statement stays as a marker until its block is rebuilt, so that the blank
        # lines that separated it from its neighbours can be given to the next statement.
        marker = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=stmt.leading_lines)
        self.markers[id(marker)] = marker  # keep it alive: its id must not be reused
        return marker

    def _relead(self, stmt: Statement, lines: Sequence[cst.EmptyLine]) -> Statement:
        if len(lines) == len(stmt.leading_lines) and all(a is b for a, b in zip(lines, stmt.leading_lines)):
            return stmt  # the same lines: the node itself (a template's is written from its code, _Kept)
        new = stmt.with_changes(leading_lines=lines)
        if id(stmt) in self.markers:
            self.markers[id(new)] = new
        return new

    def leave_If(self, original: cst.If,
                 updated: cst.If) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if original in self.plan.hoisted_ifs:
            body = [*updated.body.body, *self._carrier(updated.body)]
            body[0] = self._relead(body[0], (*updated.leading_lines, *body[0].leading_lines))
            return cst.FlattenSentinel(body)
        return updated

    def _fix_block(self, body: Sequence[cst.BaseStatement]) -> tuple[list[Statement], list[cst.EmptyLine]]:
        """Drop the markers; returns (statements, comment lines left with nothing after them).

        Comments never go with what the rewrite removes: a carrier's (a dissolved block's trailing
        comments) and those above a removed statement (``# use a straight-through estimator`` over
        ``g = tf.get_default_graph()``) move, with their blank lines, to the next statement."""
        out: list[Statement] = []
        carried: list[cst.EmptyLine] = []
        pending: list[cst.EmptyLine] | None = None
        removed_first = False
        for stmt in body:
            assert isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement))  # libcst types it wider
            commented = any(line.comment is not None for line in stmt.leading_lines)
            if id(stmt) in self.carriers or (id(stmt) in self.markers and commented):
                removed_first = removed_first or (not out and id(stmt) not in self.carriers)
                carried.extend(stmt.leading_lines)
                continue
            if id(stmt) in self.markers:
                if not out:
                    removed_first = True
                elif pending is None:
                    pending = [line for line in stmt.leading_lines if line.comment is None]
                continue
            lines = list(stmt.leading_lines)
            if not out and removed_first:
                while lines and lines[0].comment is None:
                    lines.pop(0)
                stmt = stmt.with_changes(leading_lines=lines)
            elif pending and not any(line.comment is None for line in lines):
                stmt = stmt.with_changes(leading_lines=(*pending, *lines))
            if carried:
                stmt = stmt.with_changes(leading_lines=(*carried, *stmt.leading_lines))
                carried = []
            out.append(stmt)
            pending = None
        return out, carried

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.BaseSuite:
        if not any(id(s) in self.markers for s in updated.body):
            return updated
        body, carried = self._fix_block(list(updated.body))
        if not body:  # a marker itself, so that a hoisted block leaves no `pass` behind
            body = [self._marker(cst.SimpleStatementLine(body=[cst.Pass()]))]
            if carried:  # ...and the comments travel on with it
                body = [self._relead(body[0], carried)]
                self.carriers.add(id(body[0]))
                carried = []
        return updated.with_changes(body=body, footer=(*carried, *updated.footer))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = list(updated.body)
        new = self.plan.imports.statements()
        if new:
            at = _import_insertion_point(body, self.markers)
            body[at:at] = new
        if not any(id(s) in self.markers for s in body):
            return updated.with_changes(body=body)
        body, carried = self._fix_block(body)
        footer = [cst.EmptyLine(indent=line.indent, whitespace=line.whitespace, comment=line.comment)
                  for line in carried]  # the module's footer: same lines, its own newline handling
        return updated.with_changes(body=body, footer=(*footer, *updated.footer))


def _path_to_edits(plan: Plan, parents: NodeMap) -> set[int]:
    """Every node the plan edits, and every node above one, by id (the module holds them)."""
    edited = {
        *plan.op_refs,
        *plan.renames,
        *plan.keywords,
        *plan.calls,
        *plan.removed_defs,
        *plan.defs,
        *plan.with_items,
        *plan.before_with,
        *plan.imports.edited(),
        *plan.removed_stmts,
        *plan.replace_stmts,
        *plan.hoisted_ifs,
    }
    path: set[int] = set()
    for node in edited:
        while node is not None and id(node) not in path:
            path.add(id(node))
            node = parents.get(node)
    return path


def _import_insertion_point(body: Sequence[cst.BaseStatement], markers: dict[int, object]) -> int:
    """After the module's leading imports (docstring first; removed statements are transparent)."""
    at = 1 if body and is_docstring(body[0]) else 0
    for index, stmt in enumerate(body):
        if index < at or id(stmt) in markers:
            continue
        if not is_import_line(stmt):
            break
        at = index + 1
    return at


def _renamer(name: str) -> Callable[[cst.Call], cst.Call]:
    """The call of the custom-gradient function: same positional inputs; `name=` now lives inside it
    (tf.custom_gradient functions take no keywords in graph mode)."""
    def build(updated: cst.Call) -> cst.Call:
        args = [a for a in updated.args if a.keyword is None]
        if len(args) != len(updated.args):
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(func=parsed_expression(name) if "." in name else cst.Name(name), args=args)
    return build


def _maker_call(head: str, forward: str) -> Callable[[cst.Call], cst.Call]:
    """``tf.minimum(a, b, name=n)`` -> ``head(tf.minimum, name=n)(a, b)``: a maker (or the one a name
    picks) builds the custom-gradient function around the op the call made (``forward``, spelled
    for TF2)."""
    def build(updated: cst.Call) -> cst.Call:
        keyword = next((a for a in updated.args if a.keyword is not None), None)
        args = [a for a in updated.args if a.keyword is None]
        if len(args) != len(updated.args):
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        made = f"{head}({forward}{f', name={code_of(keyword.value)}' if keyword else ''})"
        return updated.with_changes(func=parsed_expression(made), args=args)
    return build


def _operator_call(name: str) -> Callable[[cst.BinaryOperation], cst.Call]:
    """``a * b`` -> ``name(a, b)``: the operator's op now lives inside the custom-gradient function."""
    def build(updated: cst.BinaryOperation) -> cst.Call:
        return cst.Call(func=cst.Name(name), args=[cst.Arg(updated.left), cst.Arg(updated.right)],
                        lpar=updated.lpar, rpar=updated.rpar)
    return build


class Builder:
    """Builds the Plan for the sites the Planner accepted: the converting rules read the module
    through ``facts`` (the planner's read-only face) and return their edits, which the builder
    applies (``Plan.apply``); they add imports through ``imports``."""

    def __init__(self, planner: Planner, sites: list[Site], use_runtime: bool = False):
        self.use_runtime = use_runtime
        self.p = planner
        self.facts = planner.facts
        self.conversions: dict[Registration, Conversion] = {}
        self.sites = sites
        self.taken = set(planner.module_names)
        self.plan = Plan(Imports(planner.module, self.taken))
        self.builtins: dict = {}

    @property
    def imports(self) -> Imports:
        return self.plan.imports

    @property
    def tf(self) -> str:
        """The module's name for TensorFlow (imported as ``tf`` only when a rewrite needs it)."""
        return self.plan.imports.tensorflow()

    def import_module(self, module: str) -> str:
        """The name this module has for ``module`` (imported where it has none)."""
        return self.plan.imports.module(module)

    def spelled(self, func: cst.BaseExpression) -> str:
        """An op callable as the generated TF2 code must spell it: a TF1 name TF2 lacks
        (``tf.ceil``, ``tf.random_uniform``) becomes its ``tf.compat.v1`` twin, the very object."""
        if isinstance(func, cst.Attribute):
            for name in sorted(self.p.qn(func, raw=True)):
                rest = ops.tf1_only(name)
                if rest is not None:
                    return respelled_text(func, rest, "compat.v1." + rest)
        return code_of(func)

    def pointing(self, calls: Sequence[cst.BaseExpression], name: str) -> list[Edit]:
        """The overridden op calls (or operators) now call ``name``, the converted function."""
        return [Recall(call, _renamer(name) if isinstance(call, cst.Call) else _operator_call(name)) for call in calls]

    def called_as(self, reg: Registration) -> str:
        name = self.callable_name(reg)
        return f"{reg.owner}.{name}" if reg.owner else name

    def build(self) -> Plan:
        calls_by_reg: dict[Registration, list] = {}
        chosen: list = []  # (call, target): calls of a maker, or of the registration a name picks
        for site in self.sites:
            self.plan.apply([DropItem(site.with_node, site.item)])
            by_type = {op.name: target for op, target in site.entries}
            for call, op in site.calls:
                self._site_call(site, call, op, by_type[op.name], calls_by_reg, chosen)
        for reg in self.p.registrations:  # used from other modules only: converted all the same
            if reg.export is not None and reg.refusal is None and reg not in calls_by_reg:
                calls_by_reg[reg] = []
        for reg, calls in calls_by_reg.items():
            converted = (rule(self, reg, calls) for rule in idioms.rules("convert_registration"))
            self.plan.apply(next((edits for edits in converted if edits is not None), []))
        for call, target in chosen:
            if isinstance(target, facts.External):
                head = target.access
            elif isinstance(target, Dispatch):
                table = ", ".join(f"{target.spelling[value]}: {self.called_as(reg)}"
                                  for value, reg in target.choices.items())
                head = f"{{{table}}}[{code_of(target.expr)}]"
            else:
                head = self.called_as(target)
            self.plan.apply([Recall(call, _maker_call(head, self.spelled(call.func)))])
        accepted = self.p.accepted_own()
        for convert_own in idioms.rules("convert_own"):
            self.plan.apply(convert_own(self, accepted.get(idioms.idiom_of(convert_own).name, [])))
        for runtime in idioms.runtime_rules():
            if runtime.name in self.p.taken:
                self.plan.apply(runtime.emit_all(self, self.p.taken[runtime.name]))
        self.remove_dead_code()
        for edit_module in idioms.rules("edit_module"):
            self.plan.apply(edit_module(self))
        return self.plan

    def _site_call(self, site: Site, call: cst.Call | cst.BinaryOperation, op: ops.OpType,
                   target: Registration | Dispatch | facts.External, calls_by_reg: dict[Registration, list],
                   chosen: list) -> None:
        """One call of a block that makes a mapped op: pointed at what an idiom converts it to,
        or noted with the registrations it uses (``calls_by_reg``) and, for a maker or a choice,
        in ``chosen``."""
        converted = next((c for rule in idioms.rules("convert_call") if (c := rule(self, site, call, op, target))),
                         None)
        if converted is not None:
            self.plan.apply([*converted.edits, *self.pointing([call], converted.name)])
            return
        if isinstance(target, facts.External) and target.import_from:
            module, level = target.import_from
            self.plan.imports.join(module, level, target.function)
        for reg in regs_of(target):
            if reg not in calls_by_reg:  # an operator's op is made by the operator inside
                conversion = self.conversion(reg)
                conversion.forward = call.func if isinstance(call, cst.Call) else call.operator
                conversion.arity = op.arity
                conversion.name_keyword = name_keyword_code(call)
            calls_by_reg.setdefault(reg, []).append(call)
        if isinstance(target, (Dispatch, facts.External)) or target.maker:
            chosen.append((call, target))

    def conversion(self, reg: Registration) -> Conversion:
        """The rewrite's working state for ``reg`` (one used from other modules takes their arity)."""
        if reg not in self.conversions:
            export = reg.export
            self.conversions[reg] = Conversion(arity=export.arity if export and not export.refusal else 1)
        return self.conversions[reg]

    def callable_name(self, reg: Registration) -> str:
        conversion = self.conversion(reg)
        if not conversion.callable_name:
            if reg.kind == "factory" or reg.rename:
                base = reg.function.name.value
                if reg.name_key and reg.name_key[0] == "str":
                    base = "_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", reg.name_key[1]).lower().strip("_")
                    base = re.sub(r"\W+", "_", base)
                conversion.callable_name = fresh_name(base, self.taken)
            else:
                conversion.callable_name = reg.function.name.value
        return conversion.callable_name

    def renamed(self, node: cst.CSTNode) -> bool:
        """Whether an earlier rule respelt this attribute chain."""
        return node in self.plan.renames

    def accepted_own(self) -> dict[str, list]:
        """Per idiom, its own records no verdict refused (the code they run is migrated)."""
        return self.p.accepted_own()

    # -- code that only served the override --------------------------------------------------
    def is_dead(self, node: cst.CSTNode | None) -> bool:
        while node is not None:
            if id(node) in self.plan.live:
                return False
            if id(node) in self.plan.removed:
                return True
            node = self.p.parents.get(node)
        return False

    def remove_dead_code(self) -> None:
        """Remove assignments whose every use was removed (graph lookups, name building, counters
        that only served the override), transitively, then the imports only they used."""
        imports: set[ImportAssignment] = set()
        names = self._read_by(list(self.plan.removed.values()))
        while names:  # a round: what a drop of the last made dead is dropped in the next
            known = len(self.plan.removed)
            waiting = [name for name in names if self._drop_if_dead(name, imports)]
            if len(self.plan.removed) == known:
                break  # nothing more is removed: no read can have died since
            # the names the code removed this round reads, and those some live read kept
            names = waiting + self._read_by(list(self.plan.removed.values())[known:])
        self.remove_dead_imports(imports)

    def _read_by(self, roots: list[cst.CSTNode]) -> list[cst.Name]:
        return [name for root in roots for name in load_names(root, self.p.subtree(root))]

    def _drop_if_dead(self, name: cst.Name, imports: set[ImportAssignment]) -> bool:
        """Drop each assignment ``name`` reads whose every read is removed; gather the imports it
        reads. True where a read of one still stands (a later removal may yet take it)."""
        waiting = False
        for ref in self.p.referents(name):
            if isinstance(ref.scope, GlobalScope) and (self.p.links.exports or (
                    self.p.links.star_imported and self.p.handed_on(ref.name))):
                continue  # other modules of the run import from here: module-level names stay
            if isinstance(ref, ImportAssignment):
                imports.add(ref)
                continue
            bindings = ref.scope.assignments[ref.name]
            assigned = [self.p.simple_assign_value(b) for b in bindings]
            found = [a for a in assigned if a is not None]
            if len(found) < len(assigned) or any(stmt in self.plan.removed_stmts for stmt, _ in found):
                continue
            if not all(self.p.quiet(value) for _, value in found):
                continue  # `sess = session()`: the call may do more than find the graph
            if all(self.is_dead(access.node) for b in bindings for access in b.references):
                self.plan.apply(DropStatement(stmt) for stmt, _ in found)
            else:
                waiting = True
        return waiting

    def remove_dead_imports(self, candidates: Iterable[ImportAssignment]) -> None:
        """Drop import names whose every use was removed, unless the rewrite itself uses them (the
        TensorFlow alias of @tf.custom_gradient). Decided here, from the original module's scope
        analysis, instead of running libcst's RemoveImportsVisitor (a second full analysis)."""
        needed = {self.plan.imports.spelled_tensorflow()}
        needed |= {e.access.split(".")[0] for e in self.p.externals.values() if "." in e.access}
        for ref in candidates:
            if ref.name in needed or not all(self.is_dead(access.node) for access in ref.references):
                continue
            if isinstance(ref.scope, GlobalScope) and self.p.handed_on(ref.name):
                continue  # `from this_module import *` elsewhere may hand it on: consumers we cannot see
            self.plan.imports.drop(ref.statement, ref.name)


def keep_module_start(original: cst.Module, new: cst.Module) -> cst.Module:
    """A removed first import must not leave the module starting with a blank line."""
    if not new.body or not original.body:
        return new
    lines = list(new.body[0].leading_lines)
    if original.body[0].leading_lines or not lines or lines[0].comment is not None:
        return new
    while lines and lines[0].comment is None:
        lines.pop(0)
    return new.with_changes(body=[new.body[0].with_changes(leading_lines=lines), *new.body[1:]])


def written(original: cst.Module, new: cst.Module, source: str, walk: Collector) -> str:
    """``new.code``, where ``new`` is ``original`` (parsed from ``source``) rewritten: each
    statement the rewrite left as it was is copied from ``source`` rather than generated again.
    A top-level one by its lines (a module's code is its header's, then each statement's, then its
    footer's; a statement's text is whole lines: ``walk.breaks_before`` to ``walk.breaks_through``,
    the walk's record); one inside a statement that changed where it is written at the indent it
    had (``_Kept``). Generated whole where the header, footer or layout changed, or where the
    module does not end with a line break (libcst drops the last one it writes)."""
    if (not original.body or not _same(new.header, original.header) or not _same(new.footer, original.footer)
            or not original.has_trailing_newline or not new.has_trailing_newline
            or (new.default_newline, new.default_indent) != (original.default_newline, original.default_indent)):
        return code_for(new, new)
    line_starts = [0, *(m.end() for m in LINE_BREAK.finditer(source))]
    starts = [line_starts[walk.breaks_before(statement)] for statement in original.body]
    footer = "".join(code_for(original, line) for line in original.footer)
    ends = [*starts[1:], len(source) - len(footer)]
    kept = {id(statement): i for i, statement in enumerate(original.body)}
    parts = [source[:starts[0]]]
    nested = _Kept(original, source, line_starts, walk) if _KEPT_MARK not in source else None
    for statement in new.body:
        i = kept.get(id(statement))
        if i is not None:
            parts.append(source[starts[i]:ends[i]])
        else:
            parts.append(code_for(new, statement) if nested is None else nested.generated(new, statement))
    parts.append(footer)
    return "".join(parts)


_KEPT_MARK = "__tf_grl_kept_"  # a kept statement's stand-in while its changed parent is generated
_KEPT = re.compile(_KEPT_MARK + r"(\d+)__")
# a kept statement of fewer nodes is generated: cheaper than rebuilding its parents around a stand-in
_WORTH_HOLDING = 16
_CLAUSES = ("body", "orelse", "handlers", "finalbody", "cases")  # the fields that hold blocks of statements


class _Kept:
    """Writes a changed top-level statement with the statements inside it that need no code
    generated copied in: those the rewrite left as they were (the walk's own nodes), from the
    source; the generated ones made from a template (``nodes.parsed_statement``), from the code
    generated once for it. Each stands in as one line (``_KEPT_MARK``) while the rest is
    generated, then that line is replaced by the statement's lines. A kept statement stands in
    only where it is written at the indent it had (one the rewrite moved to another, a dissolved
    block's, is generated), and only if it is not small; a stand-in found anywhere but where it
    was put has the whole statement generated."""

    def __init__(self, original: cst.Module, source: str, line_starts: list[int], walk: Collector) -> None:
        self.original, self.source, self.line_starts, self.walk = original, source, line_starts, walk
        self._by_name: dict[int, cst.CSTNode] | None = None

    def generated(self, module: cst.Module, statement: cst.CSTNode) -> str:
        whole = self._template(module, statement, "")
        if whole is not None:
            return whole
        spliced = self._body_changed(module, statement)
        if spliced is not None:
            return spliced
        code = self._written(module, statement, "")
        assert code is not None  # at the top level, code_for writes it
        return code

    def _body_changed(self, module: cst.Module, statement: cst.CSTNode) -> str | None:
        """A top-level def or class of which only the statements in its block changed (its
        decorators, header, the block's first line, indent and closing lines the very nodes the
        original has): its lines up to its first statement's and after its last one's copied
        from the source, each statement of its block written at the block's indent. Else None."""
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or not isinstance(statement.body,
                                                                                       cst.IndentedBlock):
            return None
        original = self._originals().get(id(statement.name))
        if (original is None or type(original) is not type(statement)
                or not isinstance(original.body, cst.IndentedBlock) or not statement.body.body):
            return None
        old, new = original.body, statement.body
        if (new.header is not old.header or new.indent != old.indent or not _same(new.footer, old.footer)
                or any(getattr(statement, f.name) is not getattr(original, f.name)
                       for f in dataclasses.fields(statement) if f.name != "body")):
            return None
        first, last = old.body[0], old.body[-1]
        if self.walk.size(first) == 0 or self.walk.size(last) == 0 or self.walk.size(original) == 0:
            return None
        indent = self._indent(first)
        lines = self.line_starts
        parts = [self.source[lines[self.walk.breaks_before(original)]:lines[self.walk.breaks_before(first)]]]
        for inner in new.body:
            text = self._copied(module, inner, indent)
            text = text if text is not None else self._written(module, inner, indent)
            if text is None:
                return None
            parts.append(text)
        parts.append(self.source[lines[self.walk.breaks_through(last)]:lines[self.walk.breaks_through(original)]])
        return "".join(parts)

    def _originals(self) -> dict[int, cst.CSTNode]:
        """The original module's top-level defs and classes, by (the id of) their name node."""
        if self._by_name is None:
            self._by_name = {id(s.name): s for s in self.original.body
                             if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        return self._by_name

    def _written(self, module: cst.Module, statement: cst.CSTNode, indent: str) -> str | None:
        """``statement``'s code at ``indent``, the statements it holds that need no code generated
        copied in (None: as ``_code``)."""
        held: list[tuple[str, str]] = []  # (a held statement's text, its indent)
        stripped = self._hold(module, statement, indent, held)
        code = self._code(module, stripped, indent)
        if not held or code is None:
            return code
        parts, at, newline = [], 0, module.default_newline
        for m in _KEPT.finditer(code):
            text, at_indent = held[int(m.group(1))]
            line = max(code.rfind("\n", 0, m.start()), code.rfind("\r", 0, m.start())) + 1
            if code[line:m.start()] != at_indent or not code.startswith(newline, m.end()):
                return self._code(module, statement, indent)  # not where _hold expected it: generated whole
            parts += [code[at:line], text]
            at = m.end() + len(newline)
        return "".join([*parts, code[at:]])

    @staticmethod
    def _code(module: cst.Module, statement: cst.CSTNode, indent: str) -> str | None:
        """``statement``'s code written at ``indent`` (at the top level, ``code_for``'s); None
        where this libcst's nodes ask for more than ``Writer`` serves."""
        if not indent:
            return code_for(module, statement)
        tokens = written_tokens(statement, module.default_indent, module.default_newline, [indent])
        return None if tokens is None else "".join(tokens)

    def _hold(self, module: cst.Module, node: cst.CSTNode, indent: str, held: list[tuple[str, str]]) -> cst.CSTNode:
        """``node``, written at ``indent``, with each statement of its blocks that need no code
        generated replaced by a stand-in (its index in ``held``, with that indent): a template's,
        and one the walk recorded at the same indent, if it is worth it."""
        if isinstance(node, cst.IndentedBlock):
            indent += module.default_indent if node.indent is None else node.indent
            body = [self._held(module, s, indent, held) for s in node.body]
            return node.with_changes(body=body) if any(a is not b for a, b in zip(body, node.body)) else node
        if not isinstance(node, (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.Finally,
                                 cst.MatchCase, getattr(cst, "ExceptStarHandler", cst.ExceptHandler))):
            return node
        changes: dict[str, object] = {}
        for field in _CLAUSES:
            value = getattr(node, field, None)
            if isinstance(value, (tuple, list)):
                items = [self._hold(module, v, indent, held) for v in value]
                if any(a is not b for a, b in zip(items, value)):
                    changes[field] = items
            elif isinstance(value, cst.CSTNode):
                item = self._hold(module, value, indent, held)
                if item is not value:
                    changes[field] = item
        return node.with_changes(**changes) if changes else node

    def _held(self, module: cst.Module, statement: cst.CSTNode, indent: str,
              held: list[tuple[str, str]]) -> cst.CSTNode:
        """A statement of a block written at ``indent``: its stand-in where it needs no code
        generated, else itself with its own blocks' statements held."""
        text = self._copied(module, statement, indent, _WORTH_HOLDING)
        if text is None:
            return self._hold(module, statement, indent, held)
        held.append((text, indent))
        return cst.SimpleStatementLine(body=[cst.Expr(cst.Name(f"{_KEPT_MARK}{len(held) - 1}__"))])

    def _copied(self, module: cst.Module, statement: cst.CSTNode, indent: str, least: int = 1) -> str | None:
        """The code of a statement of a block written at ``indent`` that needs none generated: a
        template's, or a kept one's lines where it keeps its indent (if it is ``least`` nodes or
        more); else None."""
        text = self._template(module, statement, indent)
        if text is None and self.walk.size(statement) >= least and self._indent(statement) == indent:
            text = self._text(statement)
        return text

    @staticmethod
    def _template(module: cst.Module, statement: cst.CSTNode, indent: str) -> str | None:
        """The code of a template's statement written at ``indent``, else None."""
        tokens = template_tokens(statement, module.default_indent, module.default_newline)
        return None if tokens is None else "".join(indent if t is INDENT else t for t in tokens)

    def _indent(self, statement: cst.CSTNode) -> str:
        return indent_of(statement, self.walk.parents, self.original.default_indent)

    def _text(self, statement: cst.CSTNode) -> str:
        return self.source[self.line_starts[self.walk.breaks_before(statement)]:
                           self.line_starts[self.walk.breaks_through(statement)]]


def _same(new: Sequence[cst.CSTNode], old: Sequence[cst.CSTNode]) -> bool:
    """Whether a rewritten module's header (or footer) is the original's, node for node: libcst's
    walk hands back a new sequence even where it changed no line of it."""
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))
