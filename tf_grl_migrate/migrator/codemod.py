"""The libcst codemod: gather every gradient registration and override site of a module,
decide per site (with all facts known) whether the rewrite provably keeps the gradients,
then rewrite or refuse with a coded diagnostic.

Text in, text out: :func:`migrate_code` never touches files and never imports TensorFlow.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from ..report import Diagnostic
from . import facts, idioms, precheck, safety, slicing
from .analysis import Planner
from .nodes import code_of
from .rewrite import Builder, Rewriter, keep_module_start, written
from .safety import SafetyError  # callers catch it from here


@dataclass
class Result:
    code: str
    diagnostics: list[Diagnostic]
    # with links to other modules (facts.Links): what became of them, for the run to check both ends
    blocked: dict = field(default_factory=dict)  # (path, function) -> the Refusal why that link is not migrated here
    # ``code``'s ast where a pass made one (the safety net's): the next pass screens it without parsing again
    tree: Any = field(default=None, repr=False, compare=False)


def _transform(code: str, use_runtime: bool = False, screen: bool = True, links: facts.Links | None = None,
               part: slicing.Slice | None = None, source: str | None = None, tree: Any = None) -> Result:
    """One pass. A long module is analysed as its slice (tf_grl_migrate.migrator.slicing) and put back
    together; ``part``/``source``: the slice being analysed (``code``) and the whole module's text;
    ``tree``: ``code``'s ``ast`` where the caller has it (the screen's, or the last pass's)."""
    exporting = links is not None and bool(links.exports)
    if not exporting and not precheck.may_hold_override(code):
        return Result(code, [])
    if screen and not links:
        screened, tree = precheck.screen(code, tree)
        if screened is not None:
            return Result(code, screened)
    if part is None and not links and code.count("\n") >= slicing.MIN_LINES:
        tree = tree if tree is not None else precheck.parse(code)
        part = slicing.slice_module(code, tree) if tree is not None else None
        if part is not None:
            result = _transform(part.code, use_runtime, screen=False, part=part, source=code)
            new_code = part.expand(result.code) if result.code != part.code else code
            if new_code is not None:
                new_tree = None
                if new_code != code:
                    try:
                        new_tree = ast.parse(new_code)
                    except SyntaxError as exc:
                        raise SafetyError(f"the rewritten code does not parse ({exc.msg}); nothing written") from exc
                return Result(new_code, result.diagnostics, result.blocked, new_tree)
    module = cst.parse_module(code)
    planner = Planner(module, links, code if source is None else source, use_runtime)
    if part is not None:
        planner.module_names |= part.taken
        planner.line_of = part.line
    sites = planner.decide()
    diagnostics = sorted(planner.diagnostics)
    blocked = _blocked_links(planner)
    exported = [r for r in planner.registrations if r.export is not None and r.refusal is None]
    if not sites and not exported and not any(t.taken for t in planner.taken.values()) and not any(
            planner.accepted_own().values()):
        return Result(code, diagnostics, blocked)
    plan = Builder(planner, sites, use_runtime).build()
    diagnostics = sorted([*diagnostics, *plan.notes])
    removed, dissolved = plan.machinery(planner.parents,
                                        lambda node: planner.collector.span(node, module.default_indent))
    for rule in idioms.rules("rewrite_module"):
        whole = rule(module, plan) if use_runtime or not idioms.idiom_of(rule).runtime else None
        if whole is not None:
            new_tree = safety.check(code, whole.code, removed, dissolved, whole_module=True)
            return Result(whole.code, diagnostics, tree=new_tree)
    new_module = keep_module_start(module, Rewriter(plan, planner.parents).rewrite(module))
    new_code = written(module, new_module, code, planner.collector)
    new_tree = safety.check(code, new_code, removed, dissolved, original_tree=tree)
    return Result(new_code, diagnostics, blocked, new_tree)


def _blocked_links(planner: Planner) -> dict:
    """The links this module cannot keep its end of: a registration used elsewhere that stays (it
    cannot be converted, or a use here is refused); a block using another module's registration
    that is refused. Keyed like the run's links, (registering path, function)."""
    blocked = {}
    for reg in planner.registrations:
        if reg.export is not None and reg.refusal is not None and not reg.export.refusal:
            blocked[(None, reg.function.name.value)] = reg.refusal
    for site in planner.sites:
        if site.refusal and planner.externals:  # conservative: any link the refused map mentions
            mentioned = code_of(site.item)  # (it may stop before reading it)
            for target in planner.externals.values():
                if target.spelling in mentioned and not target.refusal:
                    blocked[(target.registered_in, target.function)] = site.refusal
    return blocked


def migrate_code(code: str, use_runtime: bool = False, screen: bool = True, links: facts.Links | None = None,
                 tree: Any = None) -> Result:
    """Migrate one module's source. Raises ``libcst.ParserSyntaxError`` if it does not parse and
    :class:`SafetyError` if the rewrite would not parse or would not be stable.

    ``use_runtime``: sites that are exactly a gradient reversal call ``tf_grl_migrate.flip_gradient``
    and a module that only holds the DANN builder becomes a re-export of the shim."""
    result = _transform(code, use_runtime, screen, links, tree=tree)
    new_tree, result.tree = result.tree, None  # not kept: a run holds its results
    if result.code == code:
        return result
    again = _again(result.code, use_runtime, links, new_tree)
    if again.code == result.code:
        return result
    # A block refused only because a helper it calls held an override block that this pass
    # dissolved along with a call the tool cannot see into (its graph from `K.get_session()`) is
    # migrated by the next pass: each pass is proven on its input, so one more is taken, and the
    # result must then be stable. Diagnostics keep the input's lines: the notes
    # of every pass, and the refusals of the last (the file as it ends).
    last = _again(again.code, use_runtime, links, again.tree)
    if last.code != again.code:
        raise SafetyError("a second run would change the rewritten code again; nothing written")
    notes = [*result.diagnostics, *_moved(again.diagnostics, result.code, code)]
    kept = [d for d in notes if d.is_note] + _moved(last.diagnostics, again.code, code)
    return Result(again.code, sorted(set(kept)), again.blocked)


def _again(code: str, use_runtime: bool, links: facts.Links | None, tree: Any) -> Result:
    try:
        return _transform(code, use_runtime, links=links, tree=tree)
    except cst.ParserSyntaxError as exc:
        raise SafetyError(f"the rewritten code does not parse ({exc.message}); nothing written") from exc


def _moved(diagnostics: list[Diagnostic], text: str, original: str) -> list[Diagnostic]:
    """Diagnostics on ``text`` (a pass's output) at the lines they have in ``original``: lines the
    passes left alone map one to one; others go to the nearest line above that did."""
    import difflib

    if not diagnostics:
        return []
    lines = {}
    matcher = difflib.SequenceMatcher(None, original.splitlines(), text.splitlines(), autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for i in range(size):
            lines[b + i + 1] = a + i + 1
    out = []
    for d in diagnostics:
        line = d.line
        while line > 1 and line not in lines:
            line -= 1
        out.append(d._replace(line=lines.get(line, 1)))
    return out
