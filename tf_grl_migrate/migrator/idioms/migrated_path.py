"""The code a migrated site runs is made to run under TF2: a TF1-only name there gets its TF2
spelling (``tf.get_default_graph()`` -> ``tf.compat.v1.get_default_graph()``, the very object TF1
had), where the migrated module would otherwise fail, at import or at its first call, with the
override itself migrated. Which code: the function holding the site (its defaults too: DeepExplain
builds ``__init__(self, graph=tf.get_default_graph(), session=tf.get_default_session())``), and,
for a block moved onto the runtime map, whatever its receiver was assigned (``self.graph =
tf.get_default_graph()`` in another method); for an idiom's own records (a migrated Defun), the
code each says it runs (its forward and its gradient). Code the rewrite removes is not looked at. A name TF2
has in no form (``tf.contrib``) gets a GRL204 note: that line needs a hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ...report import Diagnostic
from ..nodes import attributes_in, code_of, receiver
from ..plan import Edit, Note, Rename
from .base import Idiom, source
from .contract import rule
from .registered_gradient import tf2_name

if TYPE_CHECKING:
    from .contract import Converting, Facts


IDIOM = Idiom(
    name="migrated_path",
    summary="TF1-only names in the code a migrated site runs, respelled for TF2",
    codes=("GRL204",),
    examples={
        "GRL204": source("""
            import tensorflow as tf


            @tf.RegisterGradient("Rev")
            def _rev(op, grad):
                return -grad


            def f(x):
                x = tf.contrib.layers.flatten(x)
                with tf.get_default_graph().gradient_override_map({"Identity": "Rev"}):
                    return tf.identity(x)
            """),
    },
    cases=("tf1_only_names_around_the_site",),
    valid=(source("""
        import tensorflow as tf


        @tf.RegisterGradient("ScaledReverse")
        def _scaled_reverse(op, grad):
            return -tf.to_float(2) * grad


        def reverse(x):
            with tf.get_default_graph().gradient_override_map({"Identity": "ScaledReverse"}):
                return tf.identity(x)
        """),),
)


@rule("edit_module")
def edit_module(builder: Converting) -> list[Edit]:
    """Respell the TF1-only names of the code the migrated sites run; a note for each that TF2
    has in no form."""
    facts = builder.facts
    regions: dict = {}  # id -> node: the code looked at, each once
    for site in builder.sites:
        regions.setdefault(id(site.with_node), _enclosing(facts, site.with_node))
    for records in builder.accepted_own().values():  # an idiom's own migrated records: the code they run
        for record in records:
            for node in record.runs():
                regions.setdefault(id(node), node)
    for call in facts.moved:
        regions.setdefault(id(call), _enclosing(facts, call))
        for value in _receiver_values(facts, receiver(call)):
            regions.setdefault(id(value), value)
    edits: list[Edit] = []
    seen: set[int] = set()
    for region in regions.values():
        for attr in attributes_in(region, facts.subtree(region)):
            if id(attr) in seen or builder.renamed(attr) or builder.is_dead(attr):
                continue
            seen.add(id(attr))
            found = tf2_name(facts, attr)
            if isinstance(found, str):
                edits.append(Rename(attr, found))
            elif found is not None:
                edits.append(Note(Diagnostic.said(facts.pos(attr), "GRL204", "tf2_lacks_removed" if found[1] else
                                                  "tf2_lacks", name=code_of(attr), qualified=found[0])))
    return edits


def _enclosing(facts: Facts, node: cst.CSTNode) -> cst.CSTNode:
    """The function holding ``node`` (its header, defaults and decorators too), else the
    module-level statement it is in."""
    last = node
    while True:
        parent = facts.parent(last)
        if parent is None or isinstance(parent, cst.Module):
            return last
        if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            return parent
        last = parent


def _receiver_values(facts: Facts, receiver: cst.BaseExpression, depth: int = 2) -> list[cst.BaseExpression]:
    """What a moved map call's receiver was assigned: ``self.graph = <value>`` anywhere in the
    module for ``self.graph`` (and what a name assigned so holds); for a name, its assignments,
    and the default of a parameter it is."""
    if isinstance(receiver, cst.Attribute):
        values = [v for v in facts.attr_values.get(receiver.attr.value, []) if v is not None]
        return values + [w for v in values if isinstance(v, cst.Name) and depth
                         for w in _receiver_values(facts, v, depth - 1)]
    if not isinstance(receiver, cst.Name):
        return []
    values = []
    for ref in facts.referents(receiver):
        found = facts.simple_assign_value(ref)
        if found is not None:
            values.append(found[1])
            continue
        param = facts.parent(getattr(ref, "node", None))
        if isinstance(param, cst.Param) and param.default is not None:
            values.append(param.default)
    return values
