"""The override block itself, ``with <graph>.gradient_override_map({...}):``, whatever its targets:
the map must be a literal the tool can read, the receiver provably a ``tf.Graph``, the map entered
by ``with``, and every op the block makes of a mapped type a call (or ``*`` / ``-``) the rewrite
can wrap; a block that makes none is dissolved. Its check (``check_site``, run by the facts on
every block) and its messages are here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ...knowledge import ops
from ...report import Diagnostic
from .. import precheck
from ..nodes import code_of, enclosing_scopes, is_plain, load_names, operator_spelling, quoted, receiver, string_value
from ..scopes import ClassScope
from ..sites import Registration, Site, regs_of
from ..traversal import QuickVisitor
from ..verdicts import Hint, Refusal
from . import registered_gradient, runtime_hint, straight_through, targets
from .base import Idiom, source
from .contract import Checked, Gathered, rule

if TYPE_CHECKING:
    from .contract import Facts


IDIOM = Idiom(
    name="override_block",
    summary="with g.gradient_override_map({...}): the map, the graph and the ops made in the block",
    codes=("GRL101", "GRL104", "GRL105", "GRL108", "GRL111", "GRL113", "GRL116", "GRL203", "GRL207"),
    examples={
        "GRL101": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
                    return encoder(x)
            """),
        "GRL104": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"LRN": "Identity"}):
                    return tf.nn.lrn(x)
            """),
        "GRL105": source("""
            import tensorflow as tf


            def f(x, mapping):
                with tf.get_default_graph().gradient_override_map(mapping):
                    return tf.sign(x)
            """),
        "GRL108": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}) as context:
                    return tf.sign(x)
            """),
        "GRL111": source("""
            import tensorflow as tf


            def f(x):
                context = tf.get_default_graph().gradient_override_map({"Sign": "Identity"})
                return tf.sign(x)
            """),
        "GRL113": source("""
            import tensorflow as tf


            def f(x, graph):
                with graph.gradient_override_map({"Sign": "Identity"}):
                    return tf.sign(x)
            """),
        "GRL203": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"cast": "Identity"}):
                    return tf.sign(x)
            """),
        "GRL116": source("""
            import tensorflow as tf

            tf.RegisterGradient("BatchFeedback")(lambda op, grad: [grad, tf.matmul(op.inputs[0], grad, adjoint_a=True)])


            def f(x, w):  # tf.matmul of batches made BatchMatMul in early TF1, BatchMatMulV2 since
                with tf.get_default_graph().gradient_override_map({"BatchMatMul": "BatchFeedback"}):
                    return tf.matmul(x, w)
            """),
        "GRL207": source("""
            import tensorflow as tf


            def same(x, y):
                with tf.get_default_graph().gradient_override_map({"Round": "Identity"}):
                    return tf.equal(x, y)
            """),
    },
    cases=("graph_receivers_the_tool_can_prove", "override_dict_variable", "combined_with_items_name_scope",
           "calls_proven_not_to_create_the_overridden_op", "helper_function_of_the_module_in_block",
           "helper_whose_override_block_does_nothing", "helper_with_an_override_block_of_its_own",
           "map_key_that_is_no_op_type", "map_naming_the_later_op_type_wraps_the_operator",
           "map_entry_for_an_op_the_block_never_makes"),
    valid=(source("""
        import tensorflow as tf


        @tf.RegisterGradient("ReverseGrad")
        def _reverse(op, grad):
            return -grad


        def reverse(x):
            g = tf.get_default_graph()
            with g.gradient_override_map({"Identity": "ReverseGrad"}):
                y = tf.identity(x)
            return y
        """),),
)

def unknown_op(op_name: str, hint: bool = True) -> Refusal:
    """GRL104; ``hint``: say what ``--use-runtime`` does with the block (not said under it)."""
    # a promise only where it is one: the py_func hint holds for the recipe alone, so it stays in the details
    if hint and op_name in ops.PY_FUNC_TYPES:
        return Refusal.of("GRL104", "unknown_op_py_func", op=op_name, says_runtime=True)
    if hint and ops.is_registered_op_type(op_name):
        return Refusal.of("GRL104", "unknown_op_runtime", op=op_name, says_runtime=True)
    return Refusal.of("GRL104", "unknown_op", op=op_name)


RUNTIME_HINT = Hint("runtime", "--use-runtime migrates it",
                    "`tf-grl-migrate --use-runtime` keeps the registrations and enters "
                    "tf_grl_migrate.gradient_override_map instead, which gives TF2 TF1's meaning.")


@rule("gather")
def gather(facts: Facts) -> Gathered:
    """After the registrations: every ``with`` block entering a graph's map (a Site, checked by
    check_site), and a GRL111 or GRL113 for a map entered otherwise: by a wrapper named like it,
    outside ``with`` (kept for the runtime rules, reported at ``finish``), taken as a value, or
    the graph's private dict."""
    found = Gathered()
    in_with = {id(item.item) for _, item in facts.withs}
    wrapped_withs = {id(item.item): w for w, item in facts.name_withs}
    for call in facts.wrapper_calls():
        with_node = wrapped_withs.get(id(call))
        if with_node is not None:
            found.diagnostics.append(Diagnostic.said(facts.pos(with_node), "GRL113", "not_a_graph",
                                                    func=code_of(call.func)))
        else:
            found.diagnostics.append(Diagnostic.said(facts.pos(call), "GRL111", "outside_with"))
    found.loose_calls = [call for call in facts.map_calls if id(call) not in in_with]
    for node in taken_as_value(facts):
        found.diagnostics.append(Diagnostic.said(facts.pos(node), "GRL111", "taken_as_value"))
    for node in facts.private_refs:
        found.diagnostics.append(Diagnostic.said(facts.pos(node), "GRL111", "private_map"))
    found.sites = [Site(with_node, item) for with_node, item in facts.withs]
    return found


def taken_as_value(facts: Facts) -> list[cst.Attribute | cst.Call]:
    """A graph's ``gradient_override_map`` taken as a value (``enter = g.gradient_override_map``,
    ``getattr(g, "gradient_override_map")``): called later, where the tool cannot follow it."""
    found: list[cst.Attribute | cst.Call] = []
    for ref in facts.map_refs:
        holder = facts.parent(ref)
        called = isinstance(holder, cst.Call) and holder.func is ref
        stored = isinstance(holder, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)) and (
            getattr(holder, "target", None) is ref)
        if not called and not stored and facts.is_graph(ref.value):
            found.append(ref)
    for call in facts.name_calls:
        if (isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(call.args) >= 2
                and isinstance(call.args[1].value, cst.SimpleString)
                and string_value(call.args[1].value) == precheck.MARKER and facts.is_graph(call.args[0].value)):
            found.append(call)
    return found


def resolve_map(facts: Facts, arg: cst.BaseExpression) -> cst.Dict | Refusal | None:
    """A dict literal, or a variable bound to one that nothing can change between binding and
    use: every use of that binding is the argument of a ``gradient_override_map`` call (its line
    is removed later if nothing else uses it). A Refusal for a map that is
    changed or shared (``m["Sign"] = "Identity"``, ``m.update(...)``, passed to a function);
    None when it is no dict literal at all."""
    if isinstance(arg, cst.Dict):
        return arg
    if not isinstance(arg, cst.Name):
        return None
    refs = facts.referents(arg)
    found = facts.simple_assign_value(refs[0]) if len(refs) == 1 else None
    if found is None or not isinstance(found[1], cst.Dict):
        return None
    for access in refs[0].references:
        holder = facts.parent(access.node)
        if not (isinstance(holder, cst.Arg) and holder.value is access.node
                and facts.is_map_call(facts.parent(holder))):
            line = facts.pos(access.node)[0]
            return Refusal.of("GRL105", "changed", map=arg.value, line=line,
                              statement=statement_code(facts, access.node))
    return found[1]


def statement_code(facts: Facts, node: cst.CSTNode | None) -> str:
    """The first line of the statement holding ``node``, for messages."""
    while node is not None and not isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        node = facts.parent(node)
    return code_of(node).strip().splitlines()[0] if node is not None else "?"


@rule("check_site")
def check_site(facts: Facts, site: Site) -> Checked:
    """A block's verdict (contract.Checked): its Refusal, or None where the rewrite provably keeps
    TF1's gradients, and what the checks found on the way (the map's entries and phantom keys, the
    calls and operators that make a mapped op), which the planner records on the site."""
    found = _Found()
    refusal = _check(facts, site, found)
    return Checked(refusal, tuple(found.entries), tuple(found.calls), tuple(found.phantoms), tuple(found.unmade))


class _Found:
    """What the checks of one block found so far (each check reads what the earlier ones found)."""

    def __init__(self) -> None:
        self.entries: list = []  # (OpType, Registration | ops.BuiltinGradient)
        self.calls: list = []  # (Call | operator, OpType)
        self.phantoms: list[str] = []  # map keys that cannot be an op type
        # map keys, op types the tool cannot wrap: the block is refused where it may make one, so a
        # block that passes makes none (Checked.unmade)
        self.unmade: list[str] = []


def _check(facts: Facts, site: Site, found: _Found) -> Refusal | None:
    """The block's Refusal, or None where the rewrite provably keeps TF1's
    gradients: the map is one dict literal of op types the tool knows, each target a registration
    or a gradient TensorFlow provides; the receiver is a graph; the block hands control to no code
    the tool cannot see, defines nothing, and makes each op of a mapped type by a call or an
    operator the rewrite can wrap; every registration it uses is visible at the block and defined
    before it. Fills ``found`` as it goes: each check below, in this order, either passes or is
    the block's refusal."""
    call = site.map_call
    mapping = _literal_map(facts, site, call)
    if isinstance(mapping, Refusal):
        return mapping
    scan = body_scan(facts, site)
    refusal = _renamed_since(facts, scan, mapping)
    if refusal:
        return refusal
    mapped = _entries(facts, site, mapping, found)
    if isinstance(mapped, Refusal):
        return mapped
    refusal = _unwrappable_made(facts, scan, found.unmade)
    if refusal:
        return refusal
    if not facts.is_graph(receiver(call)):
        return Refusal.of("GRL113", "not_a_graph", func=code_of(call.func))
    refusal = _nothing_unseen(facts, scan, mapped, mapping)
    if refusal:
        return refusal
    operators = _operator_sites(facts, scan, mapped, found)
    if isinstance(operators, Refusal):
        return operators
    refusal = _call_sites(facts, scan, mapped, mapping, found)
    if refusal:
        return refusal
    found.calls.extend(operators)
    return _registrations_in_reach(facts, site, found)


def _literal_map(facts: Facts, site: Site, call: cst.Call) -> cst.Dict | Refusal:
    """The map: one dict literal the tool can read (GRL105), the context not bound with `as` (GRL108)."""
    if len(call.args) != 1 or call.args[0].keyword is not None:
        return Refusal.of("GRL105", "not_one_dict")
    mapping = resolve_map(facts, call.args[0].value)
    if isinstance(mapping, Refusal):
        return mapping
    if mapping is None:
        return Refusal.of("GRL105", "not_literal", map=code_of(call.args[0].value))
    if site.item.asname is not None:
        return Refusal.of("GRL108", "bound_as")
    return mapping


def _entries(facts: Facts, site: Site, mapping: cst.Dict, found: _Found) -> set[str] | Refusal:
    """Each key an op type the tool knows (or one that cannot be an op type: a phantom, noted),
    each target a registration or a gradient TensorFlow provides (GRL104, GRL105, GRL102, GRL109):
    the mapped op types; ``found.entries`` and ``found.phantoms`` filled."""
    mapped: set[str] = set()
    for element in mapping.elements:
        op_name = string_value(element.key) if isinstance(element, cst.DictElement) else None
        if op_name is None:
            return Refusal.of("GRL105", "key_not_string")
        op = ops.OP_TYPES.get(op_name)
        if op is None and not ops.can_be_op_type(op_name):
            # TF1 maps an op's *type*, and registered op types are CamelCase: `{"cast": ...}`,
            # `{"clip_by_value": ...}` override nothing, unless a call the tool cannot see makes
            # ops of a function's own name (checked below like any mapped type)
            mapped.add(op_name)
            found.phantoms.append(op_name)
            continue
        if op is None:  # an op type the tool cannot wrap: refused where the block may make one (_unwrappable_made)
            mapped.add(op_name)
            found.unmade.append(op_name)
            continue
        target = targets.match_target(facts, element.value)
        if isinstance(target, Refusal):
            return helper_hint_checked(facts, target, site, mapping)
        refusal = straight_through.check(op, target) if isinstance(target, ops.BuiltinGradient) else None
        if refusal:
            return refusal
        mapped.add(op_name)
        found.entries.append((op, target))
    return mapped


def _unwrappable_made(facts: Facts, scan: BodyScan, keys: list[str]) -> Refusal | None:
    """GRL104 for a key that is an op type the tool cannot wrap, unless the block provably makes
    none of it: it hands control to no code the tool cannot see, defines nothing, and none of its
    operators and calls makes one (``{"ClipByValue": ...}`` around ``tf.clip_by_value``, which
    makes Minimum and Maximum: TF1 overrode nothing, and the map goes with a note)."""
    if not keys:
        return None
    unwrappable = set(keys)
    for node in scan.operators:
        op_name = ops.operator_op_type(operator_spelling(node))
        if op_name in unwrappable:
            return unknown_op(op_name, hint=not facts.use_runtime)
    if scan.opaque or scan.nested:
        return unknown_op(keys[0], hint=not facts.use_runtime)
    for inner in scan.calls:
        names = facts.qn(inner.func, raw=True)
        if not makes_none_of(facts, inner, names, unwrappable):
            made = sorted((ops.ops_created(names) or frozenset()) & unwrappable)
            return unknown_op((made or keys)[0], hint=not facts.use_runtime)
    return None


def _spelt(mapping: cst.Dict) -> str:
    """The map as the source spells it, on one line: for the runtime recipe of a refusal."""
    return " ".join(code_of(mapping).split())


def _nothing_unseen(facts: Facts, scan: BodyScan, mapped: set[str], mapping: cst.Dict) -> Refusal | None:
    """The block hands control to no code the tool cannot see and defines nothing (GRL101)."""
    if scan.opaque:
        node, what = scan.opaque[0]
        return Refusal.of("GRL101", "hands_control", what=what, line=facts.pos(node)[0],
                          mapped=", ".join(repr(k) for k in sorted(mapped)), map=_spelt(mapping))
    if scan.nested:
        return Refusal.of("GRL101", "defines")
    return None


def _renamed_since(facts: Facts, scan: BodyScan, mapping: cst.Dict) -> Refusal | None:
    """A mapped op type the block makes none of, while it makes a later version of it (``Add``
    around ``a + b``, which made Add before TF 1.15 and AddV2 since): which gradient TF1 applied
    depends on its version, so the user names the one they meant (GRL116). Read from the code the
    tool can see, before anything else is asked of the map: the runtime map would not settle it."""
    later = {key: versions for e in mapping.elements if isinstance(e, cst.DictElement)
             and (key := string_value(e.key)) is not None and (versions := ops.later_versions_of(key))}
    if not later:
        return None
    made: dict[str, str] = {}  # op type -> how the block makes it (the first seen)
    for node in scan.operators:
        op_name = ops.operator_op_type(operator_spelling(node))
        if op_name is not None:
            made.setdefault(op_name, code_of(node.operator).strip())
    for call in scan.calls:
        for op_name in sorted(ops.ops_created(facts.qn(call.func, raw=True)) or ()):
            made.setdefault(op_name, code_of(call.func))
    for key, versions in later.items():
        found = sorted(versions & made.keys())
        if key not in made and found:
            return Refusal.of("GRL116", "renamed", entry=key, made=found[0], made_by=made[found[0]])
    return None


def _operator_sites(facts: Facts, scan: BodyScan, mapped: set[str], found: _Found) -> list | Refusal:
    """The operators (`a @ b`, `-a`, augmented `a @= b`) that make a mapped op, each one the
    rewrite can wrap (GRL108)."""
    by_type = {op.name: target for op, target in found.entries}
    operators = []
    for node in scan.operators:
        op_name = ops.operator_op_type(operator_spelling(node))
        if op_name is None or op_name not in mapped:
            continue
        if wraps_operator(facts, node, op_name, by_type[op_name]):
            operators.append((node, ops.OP_TYPES[op_name]))
            continue
        return Refusal.of("GRL108", "operator", op=op_name, operator=code_of(node.operator).strip())
    return operators


def _call_sites(facts: Facts, scan: BodyScan, mapped: set[str], mapping: cst.Dict, found: _Found) -> Refusal | None:
    """Each call of the block: one that makes a mapped op, with arguments the rewrite can pass on
    (``found.calls``), or one that provably makes none (GRL101 for any other)."""
    by_type = {op.name: target for op, target in found.entries}
    for index, inner in enumerate(scan.calls):
        names = facts.qn(inner.func, raw=True)
        op = ops.op_type_of_callable(names)
        if op is None:
            if makes_none_of(facts, inner, names, mapped):
                continue
            if facts.is_map_call(inner):  # `with g.gradient_override_map(...)` inside this block
                return Refusal.of("GRL101", "nested_map", line=facts.pos(inner)[0], map=_spelt(mapping))
            named = builder_call(facts, scan.calls[index:], mapped)
            assert named is not None  # scan.calls[index] is such a call, if no later one is named
            inner, names = named
            key, fields = ops.describe_call(names, mapped)
            return Refusal.of("GRL101", key, callee=quoted(inner.func), map=_spelt(mapping), **fields)
        if op.name not in mapped:
            continue
        refusal = check_call_arguments(facts, inner, op, by_type[op.name])
        if refusal:
            return refusal
        found.calls.append((inner, op))
    return None


def _registrations_in_reach(facts: Facts, site: Site, found: _Found) -> Refusal | None:
    """Every registration the block uses is visible where it is and, in its scope, defined
    before it: the migrated call needs its function when the op is made (GRL107)."""
    here = facts.scope(site.with_node)
    visible = enclosing_scopes(here)
    for target in [reg for _, entry in found.entries for reg in regs_of(entry)]:
        registration = target.stmt if target.kind != "decorator" else target.fdef
        if (facts.scope(registration) not in visible
                and not registered_gradient.reached_through_class(facts, target, here)):
            in_class = isinstance(facts.scope(registration), ClassScope)
            return Refusal.of("GRL107", "out_of_sight_in_class" if in_class else "out_of_sight",
                              name=code_of(target.name_expr))
        # TF1 needs the registration only when gradients are taken; the migrated call needs its
        # function when the op is created: in one scope, the registration must come first
        if (facts.scope(registration) is here
                and facts.where(registration) > facts.where(site.with_node)):
            return Refusal.of("GRL107", "after_block", name=code_of(target.name_expr),
                              line=facts.pos(registration)[0])
    return None


@rule("finish")
def finish(facts: Facts) -> list[Diagnostic]:
    """Once every block is decided and the runtime rules took theirs: each refused block's
    diagnostic (with what ``--use-runtime`` would do), a GRL111 for each map entered outside
    ``with``, a GRL203 note for keys that are no op type."""
    said = []
    moved = facts.moved
    for call in facts.loose_calls:
        if call not in moved:
            refusal = Refusal.of("GRL111", "outside_with")
            said.append(refusal.diagnostic(facts.pos(call), *runtime_hint(facts, call, None)))
    for site in facts.sites:
        if site.item.item in moved:
            continue
        if site.refusal:
            said.append(site.refusal.diagnostic(facts.pos(site.with_node), *runtime_hint(facts, site.map_call, site)))
        elif site.phantoms:
            keys = ", ".join(repr(k) for k in site.phantoms)
            meant = sorted(t for t in ops.OP_TYPES for k in site.phantoms if t.lower() == k.lower())
            where = facts.pos(site.with_node)
            said.append(Diagnostic.said(where, "GRL203", "phantom_keys_like", keys=keys, meant=meant[0]) if meant
                        else Diagnostic.said(where, "GRL203", "phantom_keys", keys=keys))
        elif not site.calls:
            mapped = "/".join(dict.fromkeys([*(op.name for op, _ in site.entries), *site.unmade])) or "mapped"
            said.append(Diagnostic.said(facts.pos(site.with_node), "GRL207", "no_op", mapped=mapped))
        else:  # an entry of a map that applied elsewhere in the block: it goes with the map
            made = {op.name for _, op in site.calls}
            for unused in dict.fromkeys([*(op.name for op, _ in site.entries if op.name not in made), *site.unmade]):
                said.append(Diagnostic.said(facts.pos(site.with_node), "GRL207", "no_op_entry", mapped=unused))
    return said


def helper_hint_checked(facts: Facts, refusal: Refusal, site: Site, mapping: cst.Dict) -> Refusal:
    """GRL102's hint for a target held in a parameter (make the helper module-private) is kept
    only where that would be enough: not where the block also hands control to code the tool
    cannot see (a model built there), which would then be refused all the same (GRL101)."""
    if refusal.hint("helper") is None:
        return refusal
    shown = unseen_code(facts, site, mapping)
    if shown is None:
        return refusal
    return refusal.with_hint("helper", f"the block also hands control to {shown}, code the tool cannot see")


def unseen_code(facts: Facts, site: Site, mapping: cst.Dict | None) -> str | None:
    """What in the block hands control to code the tool cannot see (a call, as spelled, or a
    ``yield`` / ``await`` / import / context manager / nested definition), or None: every
    call in it is one the tool can see into or provably makes none of the mapped types."""
    keys = {key for e in mapping.elements if isinstance(e, cst.DictElement)
            and (key := string_value(e.key)) is not None} if isinstance(mapping, cst.Dict) else set()
    scan = body_scan(facts, site)
    if scan.opaque:
        return f"`{scan.opaque[0][1]}`"
    if scan.nested:
        return "a nested definition"
    found = builder_call(facts, scan.calls, keys)
    return quoted(found[0].func) if found is not None else None


def builder_call(facts: Facts, calls: list[cst.Call], mapped: set[str]) -> tuple[cst.Call, set[str]] | None:
    """The call a GRL101 names, of the block's calls from the first one the tool cannot see:
    that one, unless it is a Python builtin (``hasattr``, ``dir``) and a later one is not (the
    call that builds the model, ``VGG16(...)``)."""
    first = None
    for call in calls:
        names = facts.qn(call.func, raw=True)
        if ops.op_type_of_callable(names) is not None or makes_none_of(facts, call, names, mapped):
            continue
        if first is None:
            first = (call, names)
        if not names or not all(n.startswith("builtins.") for n in names):
            return call, names
    return first


def wraps_operator(facts: Facts, node: cst.CSTNode, op_name: str, target: object) -> bool:
    """``a * b`` (or ``a - b``) in a block overriding its op type (with a gradient TensorFlow
    provides, or a registration of this module) is wrapped like a call when it provably creates
    that op: one operand is the result of a TensorFlow call that returns one Tensor (so
    Tensor's operator runs, not numpy's or Python's)."""
    if not (isinstance(node, cst.BinaryOperation) and op_name in ops.WRAPPABLE_OPERATORS):
        return False
    if not ((isinstance(target, ops.BuiltinGradient) and target.arity == 2) or isinstance(target, Registration)):
        return False  # a registration picked by a name, or another module's: not for operators
    return any(isinstance(side, cst.Call) and ops.returns_tensor(facts.qn(side.func, raw=True))
               for side in (node.left, node.right))


def makes_none_of(facts: Facts, call: cst.Call, names: set[str], mapped: set[str],
                  seen: frozenset[cst.FunctionDef] = frozenset()) -> bool:
    """Whether a call that is not itself a wrappable op provably creates no op of a mapped type:
    a call that makes no op at all; one TensorFlow traced to other op types (clip_by_value in a
    Sign block; never in an Identity or Cast map: TF creates those along argument- and
    dtype-dependent paths a float trace does not show, ``tf.to_float`` of an int); or a plain
    function of this module (``hard_sigmoid(x)``) whose body holds nothing else, followed three
    calls deep."""
    if creates_no_op(facts, call, names):
        return True
    if seen and enters_override(facts, call):
        return True
    wrappable = ops.op_type_of_callable(names)
    if wrappable is not None:  # a wrappable op inside another function
        return wrappable.name not in mapped
    created = ops.ops_created(names)
    if created is not None and ops.shape_only(names) and len(call.args) > 1 + any(
            a.keyword is not None and a.keyword.value == "name" for a in call.args):
        return False  # known only as called with its shape: `maxval=`, `dtype=` may make other ops
    if created is not None:  # not for Identity or Cast: TF makes them on argument- and dtype-dependent
        return not created & mapped and not mapped & {"Identity", "Cast"}  # paths a float trace misses
    fdef = facts.function_def_for(call.func) if isinstance(call.func, cst.Name) else None
    if fdef is None or fdef.decorators or fdef in seen or len(seen) >= 3:
        return False
    scan = BodyScan()
    scan.read(fdef.body, facts.subtree(fdef.body))
    if scan.opaque or scan.nested or any(
            ops.operator_op_type(operator_spelling(n)) in mapped
            for n in scan.operators):
        return False
    return all(makes_none_of(facts, inner, facts.qn(inner.func, raw=True), mapped, seen | {fdef})
               for inner in scan.calls)


def enters_override(facts: Facts, call: cst.Call) -> bool:
    """``tf.get_default_graph()`` and ``<graph>.gradient_override_map(...)`` in a helper the
    block calls: another override block, which makes no op as it is entered (its receiver's
    other calls and its body are scanned like any other code). The types it maps do not matter
    there: any op of the outer block's types in the helper refuses the outer block already.
    Not in the block itself, where an inner map may give the outer block's types another
    gradient."""
    func = call.func
    if facts.qn(func) & ops.DEFAULT_GRAPH:
        return True
    return (isinstance(func, cst.Attribute) and func.attr.value == precheck.MARKER
            and facts.is_graph(func.value))


def creates_no_op(facts: Facts, call: cst.Call, names: set[str]) -> bool:
    """Calls that run no code the tool cannot see and create no TensorFlow op (their arguments
    are scanned as calls of their own): Python builtins that do not iterate (``len``, ``range``,
    ``print``), and ``append`` / ``insert`` / ``add`` on a name bound only to a list or set
    literal. Iterating ones (``zip``, ``enumerate``, ``extend``) may drive a generator defined
    elsewhere, whose code would run inside the block: not these."""
    if names and names <= _NO_OP_BUILTINS:
        return True
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("append", "insert", "add")
            and isinstance(func.value, cst.Name)):
        return False
    refs = facts.referents(func.value)
    return bool(refs) and all(
        (found := facts.simple_assign_value(ref)) is not None and isinstance(found[1], (cst.List, cst.Set))
        for ref in refs)


def check_call_arguments(facts: Facts, call: cst.Call, op: ops.OpType, target: object) -> Refusal | None:
    """The overridden op's arguments must reach it unchanged inside the custom-gradient function:
    its tensor inputs positionally, and at most ``name=`` (every callable in the op table takes
    it), which the generated function passes on. A straight-through function is generated
    beside the block, so its ``name=`` may be any expression without calls (read when the op is
    created, as before); a registration's function lives where the registration was, so there
    it must be a literal, the same at every use."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if (len(positional) != op.arity or any(a.star for a in call.args)
            or any(a.keyword is not None and a.keyword.value != "name" for a in keywords)):
        return Refusal.of("GRL108", "arguments", call=code_of(call), arity=op.arity)
    if not keywords:
        return None
    value = keywords[0].value
    if isinstance(target, ops.BuiltinGradient) and (
            not is_plain(value) or (isinstance(facts.scope(call), ClassScope) and load_names(value))):
        return Refusal.of("GRL108", "name_value", value=code_of(value), call=code_of(call))
    return None  # a registration's: a literal goes into its function; any other makes it a maker (decide)


def body_scan(facts: Facts, site: Site) -> BodyScan:
    """Every call, operator and nested definition in a block's body, found once per block."""
    def scan() -> BodyScan:
        found = BodyScan()
        for stmt in site.with_node.body.body:
            found.read(stmt, facts.subtree(stmt))
        return found

    return facts.memo(("body_scan", site.with_node), scan)


class BodyScan(QuickVisitor):
    """Every call, operator and nested definition inside an override block."""

    def __init__(self) -> None:
        self.calls: list[cst.Call] = []
        self.operators: list[cst.BinaryOperation | cst.UnaryOperation | cst.AugAssign] = []
        self.nested: list[cst.CSTNode] = []
        self.opaque: list[tuple[cst.CSTNode, str]] = []  # (node, what): control passes to unseen code

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    # Each of these runs code the tool cannot see without a call in sight: the caller's `with`
    # body (a @contextmanager's yield), a coroutine, a module's top level, a context manager's
    # __enter__. TF1 applies the override to every op created there.
    def visit_Yield(self, node: cst.Yield) -> None:
        self.opaque.append((node, "yield from" if isinstance(node.value, cst.From) else "yield"))

    def visit_Await(self, node: cst.Await) -> None:
        self.opaque.append((node, "await"))

    def visit_Import(self, node: cst.Import) -> None:
        self.opaque.append((node, "import " + code_of(node.names[0].name)))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        star = isinstance(node.names, cst.ImportStar)
        module = "." * len(node.relative) + (code_of(node.module) if node.module is not None else "")
        self.opaque.append((node, f"from {module} import {'*' if star else '...'}"))

    def visit_With(self, node: cst.With) -> None:
        if node.asynchronous is not None:
            self.opaque.append((node, "async with"))
        for item in node.items:
            if not isinstance(item.item, cst.Call):
                self.opaque.append((item, f"with {code_of(item.item)}"))

    def visit_For(self, node: cst.For) -> None:
        if node.asynchronous is not None:
            self.opaque.append((node, "async for"))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if node.asynchronous is not None:
            self.opaque.append((node, "async for"))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.operators.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.operators.append(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        self.operators.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.nested.append(node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.nested.append(node)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.nested.append(node)
        return False


# builtins that create no op (not abs/round/min/max: `abs(t)` is Tensor.__abs__, an Abs op; not
# hasattr/getattr: they run properties)
_NO_OP_BUILTINS = frozenset("builtins." + n for n in (
    "len", "range", "print", "isinstance", "issubclass", "int", "float", "str", "bool", "repr", "id", "type"))
