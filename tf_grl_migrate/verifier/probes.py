"""What verification runs, read from the source with Python's ``ast`` (no TensorFlow, no libcst):

- the *sites*: ``with <graph>.gradient_override_map(...)`` items of the original, and which of
  them the migration removed (``--verify``) or all of them (``--verify-against``);
- the *callable* through which each site is reached: the module-level function that holds it, or
  the class whose method holds it (instantiated, then called); a function that returns functions
  has those called too (a site in a closure is reached that way); a map entered by hand, through
  the module-level functions that enter it (``reaching``: the other names that reach a site, for
  a port written unlike the original);
- the *arguments*: a float32 tensor for each parameter that flows into an overridden op, a small
  model for a parameter the code calls (``model_fn``), every other parameter from its default
  and, for numbers, also at a second value (a literal a call in the run passes, else one chosen
  here);
- the lines of the migrated text the tool wrote (a failure there is the tool's).
What of the module a worker runs to call it is ``loading.definitions``.
"""

from __future__ import annotations

import ast
import difflib
import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, Optional, Union

from ..migrator.precheck import DEFUN, MARKER, is_runtime_map
from ..migrator.slicing import module_binds as _binds
from .protocol import Entry, Param

SHAPES = ([4, 3], [3, 3], [4, 1], [2, 5, 5, 3], [[2, 5, 5, 3], [3, 3, 3, 3]])  # rank 2 first (square: matrix
# products; one column); rank 4 (NHWC) for image ops; last, an image and filters (a convolution's
# input and weights: a pair is the first input's shape and the others')
CHOSEN = (1.0, 0.5)  # values for a number nothing gives: no default, no literal at a call site
Scope = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]  # a def or class a site is in
Chain = tuple[Scope, ...]  # the defs and classes around a site, outermost first
Block = Union[ast.With, ast.AsyncWith, "_Body"]  # what a site is reached through
Site = tuple[ast.Call, Chain, Optional[Block]]  # (map or Defun call, chain, block; None: a map entered by hand)
Literals = dict[tuple[str, Union[int, str]], list[Any]]  # ("pos", i) | ("kw", name) -> the numbers calls pass
ParamSpec = tuple[Any, ...]  # (name, has a default, the default's node | None[, "keyword"])


def _map_call(node: ast.AST | None) -> ast.Call | None:
    """``node`` where it is ``<graph>.gradient_override_map(...)``; not the runtime's
    (``tf_grl_migrate.``: migrated)."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == MARKER
            and not (isinstance(node.func.value, ast.Name) and is_runtime_map(node.func.value.id))):
        return node
    return None


def override_sites(tree: ast.Module) -> list[Site]:
    """(map call node, chain of enclosing def/class nodes, the with node) for every ``with
    ... .gradient_override_map(...)`` item, in source order, then (call, chain, None) for every
    map call entered by hand (``ctx = g.gradient_override_map(m)``)."""
    found: list[Site] = []
    loose: list[Site] = []

    def visit(node: ast.AST, chain: Chain, items: set[int]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.With, ast.AsyncWith)):
                for item in child.items:
                    call = _map_call(item.context_expr)
                    if call is not None:
                        found.append((call, chain, child))
                        items.add(id(call))
            elif (call := _map_call(child)) is not None and id(child) not in items:
                loose.append((call, chain, None))
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, (*chain, child), items)
            else:
                visit(child, chain, items)

    visit(tree, (), set())
    return found + defun_sites(tree) + loose


def _defun_with_gradient(node: ast.AST) -> ast.Call | None:
    """``node`` where it is ``function.Defun(..., python_grad_func=g)`` or ``Defun(..., grad_func=G)``."""
    if (isinstance(node, ast.Call) and ((isinstance(node.func, ast.Attribute) and node.func.attr == DEFUN)
                                        or (isinstance(node.func, ast.Name) and node.func.id == DEFUN))
            and any(k.arg in ("python_grad_func", "grad_func") for k in node.keywords)):
        return node
    return None


def defun_sites(tree: ast.Module) -> list[Site]:
    """(Defun call, chain, the body that reaches it) for every Defun with a gradient: a decorated
    module-level def is reached as itself; one made inside a function, through that function."""
    found: list[Site] = []

    def visit(node: ast.AST, chain: Chain) -> None:
        for child in ast.iter_child_nodes(node):
            around = next((n for n in reversed(chain) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                call = next(filter(None, map(_defun_with_gradient, child.decorator_list)), None)
                if call is not None and not chain:
                    found.append((call, (child,), _Body(child.body, [])))
                elif call is not None and around is not None:
                    found.append((call, chain, _Body(around.body, [])))
            elif (isinstance(child, ast.Call) and (made := _defun_with_gradient(child.func)) is not None
                  and around is not None):
                found.append((made, chain, _Body(around.body, [])))
            visit(child, (*chain, child) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                 ast.ClassDef)) else chain)

    visit(tree, ())
    return found


def _qualname(chain: Chain) -> str:
    return ".".join(n.name for n in chain) or "<module>"


def migrated_sites(original: ast.Module, migrated: ast.Module | None) -> list[Site]:
    """The original's sites the migration removed: per enclosing def, as many as it lost (all of a
    def's sites share its callable, so which of them is immaterial)."""
    sites = override_sites(original)
    if migrated is None:
        return sites
    left: dict[str, int] = {}
    for _, chain, _ in override_sites(migrated):
        left[_qualname(chain)] = left.get(_qualname(chain), 0) + 1
    out = []
    for site in sites:
        name = _qualname(site[1])
        if left.get(name, 0) > 0:
            left[name] -= 1
            continue
        out.append(site)
    return out


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _flowing(fdef: ast.AST, blocks: Iterable[Block]) -> set[str]:
    """Names whose values can reach an op made in the override blocks: the names the blocks read,
    then, backwards through the function's assignments, the names those were computed from."""
    flow: set[str] = set()
    for block in blocks:
        for stmt in block.body:
            flow |= _names(stmt)
        for item in block.items:  # `with scope(x) as name, g.gradient_override_map(...)`
            if item.context_expr is not None and _map_call(item.context_expr) is None:
                flow |= _names(item.context_expr)
    pairs: list[tuple[set[str], set[str]]] = []
    for node in ast.walk(fdef):
        if isinstance(node, ast.Assign):
            pairs.append((set().union(*(_targets(t) for t in node.targets)), _names(node.value)))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            pairs.append((_targets(node.target), _names(node.value)))
        elif isinstance(node, (ast.For, ast.comprehension)):
            pairs.append((_targets(node.target), _names(node.iter)))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs.append((_targets(node.optional_vars), _names(node.context_expr)))
        elif isinstance(node, ast.NamedExpr):
            pairs.append(({node.target.id}, _names(node.value)))
    changed = True
    while changed:
        changed = False
        for targets, sources in pairs:
            if targets & flow and not sources <= flow:
                flow |= sources
                changed = True
    return flow


def _literal(node: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _params(fdef: ast.FunctionDef | ast.AsyncFunctionDef, skip_self: bool) -> list[ParamSpec]:
    """[(name, has_default, default node | None[, "keyword"])] of the positional parameters, then
    the keyword-only ones (marked)."""
    a = fdef.args
    positional = list(a.posonlyargs) + list(a.args)
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out: list[ParamSpec] = [(p.arg, d is not None, d) for p, d in zip(positional, defaults)]
    if skip_self and out:
        out = out[1:]
    return out + [(p.arg, d is not None, d, "keyword") for p, d in zip(a.kwonlyargs, a.kw_defaults)]


def call_site_literals(trees: Iterable[ast.AST], names: set[str]) -> Literals:
    """Literal numbers the calls of ``names`` (a function's or method's name, an instance's) pass,
    by position and by keyword: {("pos", i) | ("kw", name): [values]}, in source order."""
    found: Literals = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if called not in names:
                continue
            for i, arg in enumerate(node.args):
                ok, value = _literal(arg)
                if ok and _is_number(value):
                    found.setdefault(("pos", i), []).append(value)
            for kw in node.keywords:
                ok, value = _literal(kw.value)
                if kw.arg and ok and _is_number(value):
                    found.setdefault(("kw", kw.arg), []).append(value)
    return found


def _second(default: Any, literals: Iterable[Any]) -> object:
    for value in literals:
        if value != default:
            return value
    if isinstance(default, int):
        return default + 1 if default != 1 else 2
    return 0.5 if default != 0.5 else 2.0


def _unpacked(fdef: ast.AST, name: str) -> int:
    """How many names ``a, b = name`` unpacks a parameter into (a Keras ``call(self, inputs)``
    taking ``[x, lambda]``); 0 when it is not unpacked."""
    for node in ast.walk(fdef):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name
                and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List))
                and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts)):
            return len(node.targets[0].elts)
    return 0


def _called(fdef: ast.AST) -> set[str]:
    """The names a function calls (a parameter among them is a callable: ``model_fn(x)``)."""
    return {n.func.id for n in ast.walk(fdef) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _arguments(fdef: ast.AST, params: list[ParamSpec], flow: set[str], literals: Literals, tensor_first: bool,
               ops: Sequence[str] = (), ints: Iterable[str] = frozenset()) -> list[list[Param]]:
    """Ways to call ``fdef``, best first: each a list with one entry per parameter,
    {"name", "kind": "tensor" | "tensors" (``count`` of them) | "value" (``values``: first, then
    second) | "default"}. The first way gives a tensor to every parameter without a default that
    flows into an overridden op; the second (when there are several) to the first of them only,
    the others taking numbers (a bit width, a scale); ``ints``: parameters that take integers only."""
    flow = flow - set(ints)  # an integer parameter is never given a tensor
    models = {p[0] for p in params if not p[1]} & _called(fdef)  # given a small model making the map's op types
    flowing = [p[0] for p in params if p[0] in flow and not p[1] and p[0] not in models]
    if not flowing and tensor_first:
        flowing = [p[0] for p in params if not p[1] and p[0] not in models and p[0] not in ints][:1]
    variants = [flowing] + ([flowing[:1]] if len(flowing) > 1 else [])
    out = []
    for tensors in variants:
        args: list[Param] = []
        for i, (name, has_default, default, *keyword) in enumerate(params):
            lits = literals.get(("kw", name), []) + literals.get(("pos", i), [])
            if name in models:
                args.append({"name": name, "kind": "model", "ops": list(ops)})
            elif name in tensors:
                count = _unpacked(fdef, name)
                args.append({"name": name, "kind": "tensors", "count": count} if count
                            else {"name": name, "kind": "tensor"})
            elif has_default:
                ok, value = _literal(default)
                if ok and _is_number(value):
                    args.append({"name": name, "kind": "value", "values": [value, _second(value, lits)]})
                else:  # None, a string, a name: Python's own default
                    args.append({"name": name, "kind": "default"})
            elif name in ints:
                whole = [v for v in lits if isinstance(v, int)]
                args.append({"name": name, "kind": "value", "values": [whole[0], _second(whole[0], whole[1:])]
                             if whole else [1, 2]})
            elif lits:
                args.append({"name": name, "kind": "value", "values": [lits[0], _second(lits[0], lits[1:])]})
            else:
                args.append({"name": name, "kind": "value", "values": list(CHOSEN)})
            if keyword:
                args[-1]["keyword"] = True
        out.append(args)
    return out


def _init_arguments(init: ast.FunctionDef | None, literals: Literals) -> tuple[list[Param], list[str]]:
    """(arguments for ``__init__``: defaults and literals a call of the class passes, one value
    each, a number for the required parameters nothing gives a value for; those parameters)."""
    if init is None:
        return [], []
    args: list[Param] = []
    missing: list[str] = []
    for i, (name, has_default, _, *_) in enumerate(_params(init, skip_self=True)):
        lits = literals.get(("kw", name), []) + literals.get(("pos", i), [])
        if lits:
            args.append({"name": name, "kind": "value", "values": lits[:1]})
        elif has_default:
            args.append({"name": name, "kind": "default"})
        else:  # tried at a number of our choice first, then without __init__ at all
            args.append({"name": name, "kind": "value", "values": [CHOSEN[0]]})
            missing.append(name)
    return args, missing


class Probe(NamedTuple):
    """What one worker call exercises: the entry (a module-level function or class), the ways to
    call it, and the sites it reaches."""

    entry: dict  # {"kind": "function" | "class" | "block", "name", "classes", "method", "init", "variants", ...}
    sites: list  # [(line, col)]
    labels: list  # one per way of calling; "{shape}" stands for the input shape tried
    reason: str | None = None  # set: not verifiable without running anything
    fallbacks: tuple = ()  # per site: its block exercised alone (a Probe), or None, where this cannot run
    shapes: tuple = ()  # input shapes the module's code names, tried after SHAPES (shape_hints)

    @property
    def label(self) -> str:
        return self.labels[0]


def plan(original: str, migrated: str | None, others: Sequence[ast.Module] = ()) -> list[Probe]:
    """The probes for a module: ``migrated`` None takes every site of ``original`` (the
    ``--verify-against`` case); ``others`` are the parsed trees of the run's other modules,
    searched for literal arguments. Never raises for a text that parses."""
    tree = ast.parse(original)
    new_tree = ast.parse(migrated) if migrated is not None else None
    sites = migrated_sites(tree, new_tree)
    trees = [tree, *others]
    probes: dict[tuple[int, ...], list[Any]] = {}
    loose: list[Probe] = []
    for call, chain, block in sites:
        where = (call.lineno, call.col_offset + 1)
        entries: list[tuple[Chain, Block]]
        if block is not None and not _in_init(chain):
            entries = [(chain, block)]
        else:
            entries = _users(tree, chain)
            if not entries:
                how = ("the map is entered by hand (`ctx.__enter__()`)" if block is None
                       else "the override runs in __init__")
                owner = next((n.name for n in chain if isinstance(n, ast.ClassDef)), None)
                loose.append(Probe({}, [where], [_qualname(chain)], f"{how}, and no module-level function of the "
                                   f"module uses {owner or 'it'} to reach it; test this site by hand"))
                continue
        for entry, entered in entries:
            key = tuple(id(n) for n in _entry_chain(entry))
            alone = (block_probe(tree, new_tree, original, migrated, call, block, chain)
                     if entered is block and isinstance(block, (ast.With, ast.AsyncWith)) else None)
            if key in probes:
                probes[key][1].append(where)
                probes[key][2].append(entered)
                probes[key][3].append(alone)
                probes[key][4].extend(k for k in _map_keys(call) if k not in probes[key][4])
                probes[key][5] |= _declared_integers(call, entry)
                continue
            probes[key] = [entry, [where], [entered], [alone], _map_keys(call), _declared_integers(call, entry)]
    hinted = shape_hints(tree)
    return [*(_probe(chain, where, blocks, trees, tree, ops, ints)._replace(fallbacks=tuple(alone), shapes=hinted)
              for chain, where, blocks, alone, ops, ints in probes.values()), *loose]


def shape_hints(tree: ast.Module) -> tuple:
    """Input shapes the module's own code asks for, beyond SHAPES: a split along the last axis
    into sizes (``tf.split(x, [3, 3], axis=-1)``: a last axis of 6), a reshape to fixed trailing
    dimensions (``tf.reshape(g, [-1, 4, 4])``: a batch of 4x4), a transpose of a rank SHAPES
    lacks (``tf.transpose(u, [0, 2, 1])``: a batch of square matrices). Geometry and linear
    algebra code (a 6-vector pose, a 4x4 transform, a batch of matrix logarithms) fails on every
    shape of SHAPES; these are tried after them."""
    found: list[list[int]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) >= 2):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        sizes = _integers(node.args[1])
        if name == "split" and sizes and _last_axis(node):
            shape = [4, sum(sizes)]
        elif name == "reshape" and sizes and len(sizes) >= 3 and sizes[0] == -1 and min(sizes[1:]) > 0:
            shape = [2, *sizes[1:]]
        elif name == "transpose" and sizes and len(sizes) in (3, 5) and sorted(sizes) == list(range(len(sizes))):
            shape = [2, *[3] * (len(sizes) - 1)]  # a batch of square matrices (rank 4 is in SHAPES)
        else:
            continue
        if shape not in found and shape not in SHAPES and math.prod(shape) <= 4096:
            found.append(shape)
    return tuple(found[:3])


def _integers(node: ast.expr) -> list[int] | None:
    """The numbers of a list or tuple literal of integers, else None."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    values = [v for elt in node.elts if (v := _integer(elt)) is not None]
    return values if len(values) == len(node.elts) else None


def _integer(node: ast.expr) -> int | None:
    """An integer literal's value (``-1`` too), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    return sign * node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _last_axis(call: ast.Call) -> bool:
    """Whether a split is along the last axis (``axis=-1``; a third argument of -1)."""
    axis = next((k.value for k in call.keywords if k.arg == "axis"), call.args[2] if len(call.args) > 2 else None)
    return axis is not None and _integer(axis) == -1


_INTEGER_TYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def _declared_integers(call: ast.Call, chain: Chain) -> set[str]:
    """The parameters a Defun decorating the entry declares integer (``Defun(tf.float32,
    tf.int32)``: meProp's ``k``): TF1 took only integers there, so they are given integers."""
    fdef = chain[-1] if chain else None
    if not (_defun_with_gradient(call) and isinstance(fdef, ast.FunctionDef) and call in fdef.decorator_list):
        return set()
    names = [p.arg for p in [*fdef.args.posonlyargs, *fdef.args.args]]
    declared = [a.attr if isinstance(a, ast.Attribute) else a.id if isinstance(a, ast.Name) else None
                for a in call.args]
    return {name for name, kind in zip(names, declared) if kind in _INTEGER_TYPES}


class _Body(NamedTuple):
    """A function's whole body standing for the block a site is reached through, where the map
    is entered by hand or by an object the function makes (``with Explainer(): ...``)."""

    body: list[ast.stmt]
    items: list[ast.withitem]


def _in_init(chain: Chain) -> bool:
    entry = _entry_chain(chain)
    return len(entry) > 1 and isinstance(entry[-1], ast.FunctionDef) and entry[-1].name == "__init__"


def _users(tree: ast.Module, chain: Chain) -> list[tuple[Chain, Block]]:
    """(chain, block) through which a site that no call of its own reaches is reached: a map
    entered by hand in a module-level function is that function, whole; one in a class (made in
    ``__init__``, entered in ``__enter__``: DeepExplain's) is each module-level function that uses
    the class, through its ``with`` statements that do (else its whole body)."""
    entry = _entry_chain(chain)
    if len(entry) == 1 and isinstance(entry[0], ast.FunctionDef):
        return [(entry, _Body(entry[0].body, []))]
    owner = next((n for n in entry if isinstance(n, ast.ClassDef)), None)
    if owner is None or owner is not chain[0]:
        return []
    found: list[tuple[Chain, Block]] = []
    for fdef in tree.body:
        if not isinstance(fdef, ast.FunctionDef) or owner.name not in _names(fdef):
            continue
        withs: list[Block] = [n for n in ast.walk(fdef) if isinstance(n, (ast.With, ast.AsyncWith))
                 and any(owner.name in _names(item.context_expr) for item in n.items)]
        for block in withs or [_Body(fdef.body, [])]:
            found.append(((fdef,), block))
    return found


def _entry_chain(chain: Chain) -> Chain:
    """The classes (outermost first) and the def through which a site is reached."""
    out: list[Scope] = []
    for node in chain:
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            break
    return tuple(out)


def _map_keys(call: ast.Call | None) -> list[str]:
    """The op types a map call names, where its map is a literal (``{"Relu": ...}``)."""
    mapping = call.args[0] if call is not None and len(call.args) == 1 else None
    if not isinstance(mapping, ast.Dict):
        return []
    return [k.value for k in mapping.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _probe(chain: Chain, where: list[tuple[int, int]], blocks: Sequence[Block], trees: Sequence[ast.AST],
           tree: ast.Module, ops: Sequence[str] = (), ints: Iterable[str] = frozenset()) -> Probe:
    entry_chain = _entry_chain(chain)
    if not entry_chain:
        return Probe({}, where, ["<module>"], "the override runs in the module's own statements (script code), "
                                              "which verification never runs; no function or class reaches it")
    fdef = entry_chain[-1]
    classes = [n.name for n in entry_chain if isinstance(n, ast.ClassDef)]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return Probe({}, where, [".".join(classes)], "the override is in a class body, not in a method "
                                                     "verification can call")
    if isinstance(fdef, ast.AsyncFunctionDef):
        return Probe({}, where, [fdef.name], "an async function is not exercised")
    closure = len(chain) > len(entry_chain)  # the site is in a def nested in the entry: it returns that
    if not classes:
        variants = _arguments(fdef, _params(fdef, skip_self=False), _flowing(fdef, blocks),
                              call_site_literals(trees, {fdef.name}), tensor_first=not closure, ops=ops, ints=ints)
        entry: dict[str, Any] = {"kind": "function", "name": fdef.name, "variants": variants}
        return Probe(entry, where, [_label(fdef.name, v, closure) for v in variants])
    top = entry_chain[0]
    owner = entry_chain[-2]
    if fdef.name == "__init__":
        return Probe({}, where, [".".join(classes)], "the override runs in __init__; verification calls methods "
                                                     "of an instance")
    init = next((n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    instances = {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                 and isinstance(n.value.func, ast.Name) and n.value.func.id == owner.name
                 for t in n.targets if isinstance(t, ast.Name)}
    static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fdef.decorator_list)
    init_args, missing = _init_arguments(init, call_site_literals(trees, {owner.name}))
    callers = {fdef.name} | (instances if fdef.name in ("__call__", "call") else set())
    variants = _arguments(fdef, _params(fdef, skip_self=not static), _flowing(fdef, blocks),
                          call_site_literals(trees, callers), tensor_first=not closure, ops=ops)
    entry = {"kind": "class", "name": top.name, "classes": classes, "method": fdef.name, "static": static,
             "init": init_args, "missing": missing, "variants": variants}
    made = ".".join(classes)
    if not static:
        shown = [f"{a['name']}={a['values'][0]!r}" for a in init_args if a["kind"] == "value"]
        made += "{init}" if missing else f"({', '.join(shown)})"
        entry["made"] = [f"({', '.join(shown)})", "(<without __init__>)"]
    called = "" if fdef.name == "__call__" and not static else f".{fdef.name}"
    return Probe(entry, where, [_label(made + called, v, closure) for v in variants])


def reaching(tree: ast.Module, probe: Probe, trees: Sequence[ast.Module] = ()) -> list[Probe]:
    """Other ways the module reaches a probe's site, each a Probe with the same sites: a
    module-level instance of the entry's class (``flip_gradient = FlipGradientBuilder()``, called
    as the method is), and each module-level function calling the entry's function, class or
    such an instance (``domain_branch(features)``), with its own parameters. For a port written
    unlike the original (a builder class replaced by a function ``flip_gradient``), a name the port
    also defines reaches the same computation."""
    entry = probe.entry
    if entry.get("kind") not in ("function", "class"):
        return []
    found: list[Probe] = []
    names = {entry["name"]}
    if entry["kind"] == "class" and not entry.get("static") and len(entry["classes"]) == 1:
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id == entry["name"]
            ):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                        made = {"kind": "instance", "name": target.id, "method": entry["method"],
                                "variants": entry["variants"]}
                        called = "" if entry["method"] == "__call__" else f".{entry['method']}"
                        labels = [_label(target.id + called, v) for v in entry["variants"]]
                        found.append(Probe(made, probe.sites, labels))
    for fdef in tree.body:
        if not isinstance(fdef, ast.FunctionDef) or fdef.name in names:
            continue
        calls = {n.func.id for n in ast.walk(fdef) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        if calls & names:
            found.append(_probe((fdef,), probe.sites, [_Body(fdef.body, [])], [tree, *trees], tree,
                                _model_ops(probe.entry)))
    return [p for p in found if p.reason is None]


def _model_ops(entry: Entry) -> list[str]:
    return next((a.get("ops", []) for v in entry.get("variants", []) for a in v if a.get("kind") == "model"), [])


def module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at module level (what a port may be called through)."""
    names: set[str] = set()
    for stmt in tree.body:
        names |= _binds(stmt)
    return names


def _label(name: str, args: Sequence[Param], closure: bool = False) -> str:
    parts = []
    for a in args:
        if a["kind"] == "tensor":
            parts.append(f"{a['name']}[{{shape}}]")
        elif a["kind"] == "tensors":
            parts.append(f"{a['name']}=[{a['count']} x [{{shape}}]]")
        elif a["kind"] == "value":
            parts.append(f"{a['name']}=" + "|".join(repr(v) for v in a["values"]))
    label = f"{name}({', '.join(parts)})"
    if closure or not any(a["kind"] in ("tensor", "tensors") for a in args):
        label += "(x[{shape}])"  # the function it returns, called on a tensor
    return label


# ---------------------------------------------------------------------------------------------
# The override block alone, where its callable cannot be exercised

_BUILTIN_NAMES = frozenset(dir(__import__("builtins")))


def _module_names(tree: ast.Module) -> set[str]:
    """Names the module's definitions bind (imports, defs, classes, assignments)."""
    names: set[str] = set()
    for stmt in tree.body:
        if not _is_main_guard(stmt):
            names |= _binds(stmt)
    return names


def _reads(nodes: Iterable[ast.AST]) -> tuple[set[str], dict[str, list[str]], set[str]]:
    """(names read, {name: attributes read} for names read only as ``name.attr``, names stored)
    in ``nodes``, not looking into nested defs and classes."""
    loads: set[str] = set()
    attrs: dict[str, set[str]] = {}
    plain: set[str] = set()
    stores: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stores.add(node.name)
                for d in getattr(node, "decorator_list", []):
                    visit(d)
            return
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            attrs.setdefault(node.value.id, set()).add(node.attr)
            loads.add(node.value.id)
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.add(node.id)
                plain.add(node.id)
            else:
                stores.add(node.id)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for n in nodes:
        visit(n)
    objects = {k: sorted(v) for k, v in attrs.items() if k not in plain}
    return loads, objects, stores


def _region(original: str, migrated: str, first: int, last: int) -> tuple[int, int] | None:
    """The lines (1-based, inclusive) of ``migrated`` that took the place of ``original``'s lines
    ``first``..``last``: what the rewrite inserted there, replaced them with, or kept of them."""
    a, b = first - 1, last
    js = []
    for tag, i1, i2, j1, j2 in _opcodes(original, migrated):
        if tag == "equal":
            lo, hi = max(i1, a), min(i2, b)
            if lo < hi:
                js += [j1 + lo - i1, j1 + hi - i1]
        elif (i1 < b and i2 > a) or (tag == "insert" and a <= i1 < b) or (tag == "insert" and i1 == a):
            js += [j1, j2]
    if not js or max(js) <= min(js):
        return None
    return min(js) + 1, max(js)


def block_probe(tree: ast.Module, migrated_tree: ast.Module | None, original: str, migrated: str | None,
                call: ast.Call, block: ast.With | ast.AsyncWith, chain: Chain) -> Probe | None:
    """The override block exercised alone, as a function of the names it reads (tensors; a name
    read only as ``name.attr`` an object with tensor attributes), the graph's map entered on the
    default graph; against the lines the migration put in its place, given the same values. Only
    where the map is a literal of strings (its registrations then live outside the block) and the
    new lines read nothing the block did not (or the module defines): anything else would compare
    different things. None where that does not hold."""
    if migrated is None or migrated_tree is None:
        return None
    item = next(i for i in block.items if i.context_expr is call)
    mapping = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if not (isinstance(mapping, ast.Dict) and all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)
            and isinstance(v.value, str) for k, v in zip(mapping.keys, mapping.values))):
        return None
    region = _region(original, migrated, block.lineno, block.end_lineno or block.lineno)
    if region is None:
        return None
    new_lines = migrated.splitlines()[region[0] - 1:region[1]]
    import textwrap

    try:
        new_body = ast.parse(textwrap.dedent("\n".join(new_lines))).body
    except SyntaxError:
        return None
    # the original block with its map entered on the graph the worker gives
    func = call.func
    assert isinstance(func, ast.Attribute)  # a map call's: <graph>.gradient_override_map
    func.value, saved = ast.Name("__grl_graph__", ast.Load()), func.value
    try:
        old_source = ast.unparse(block)
    finally:
        func.value = saved
    old_reads, old_objects, old_stores = _reads([*block.body, *(i.context_expr for i in block.items if i is not item),
                                                 mapping])
    new_reads, new_objects, new_stores = _reads(new_body)
    module_old, module_new = _module_names(tree), _module_names(migrated_tree)
    free = sorted(n for n in old_reads if n not in module_old and n not in _BUILTIN_NAMES)
    if any(n not in free and n not in module_new and n not in _BUILTIN_NAMES and n not in new_stores
           for n in new_reads):
        return None  # the new lines need something the block did not have (a def the rewrite put elsewhere)
    objects = {n: old_objects[n] for n in free if n in old_objects}
    if any(n in objects and set(new_objects.get(n, ())) - set(objects[n]) for n in new_reads):
        return None
    outputs = sorted(n for n in old_stores if n not in free or n in old_reads) + [
        f"{n}.{a}" for n in objects for a in _stored_attributes(block, n)]
    outputs = [o for o in outputs if "." in o or o in old_stores]
    tensors = [n for n in free if n not in objects]
    label = f"the block at line {block.lineno}(" + ", ".join(
        [f"{n}[{{shape}}]" for n in tensors] + [f"{n}.{a}[{{shape}}]" for n in objects for a in objects[n]]) + ")"
    entry = {"kind": "block", "name": f"line {block.lineno}", "tensors": tensors, "objects": objects,
             "outputs": outputs, "variants": [[]],
             "original": {"source": _wrap(old_source, free, outputs), "reads": sorted(old_reads - set(free))},
             "migrated": {"source": _wrap("\n".join(new_lines), free, outputs, dedent=True),
                          "reads": sorted(new_reads - set(free)), "first": region[0]}}
    return Probe(entry, [(call.lineno, call.col_offset + 1)], [label])


def _stored_attributes(block: ast.AST, name: str) -> list[str]:
    return sorted({n.attr for n in ast.walk(block) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                   and isinstance(n.value, ast.Name) and n.value.id == name})


def _wrap(source: str, free: Sequence[str], outputs: Sequence[str], dedent: bool = False) -> str:
    """``def __grl_block__(free...)``: the block, then the values it leaves (a ``return`` in the
    block returns first)."""
    import textwrap

    body = textwrap.dedent(source) if dedent else source
    pairs = ", ".join(f"{o!r}: {o}" for o in outputs)
    return (f"def __grl_block__({', '.join(['__grl_graph__', *free])}):\n"
            + textwrap.indent(body, "    ") + f"\n    return {{'__grl_block__': True, {pairs}}}\n")


def _is_main_guard(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
            and "__name__" in _names(stmt.test))


# ---------------------------------------------------------------------------------------------
# Which lines of the migrated text the tool wrote (a failure there is the tool's)


@functools.lru_cache(maxsize=16)
def _opcodes(original: str, migrated: str) -> tuple:
    """The line diff of a migration, computed once per pair of texts (every site's block region
    and every probe's written lines read it)."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), migrated.splitlines(), autojunk=False)
    return tuple(matcher.get_opcodes())


def written_lines(original: str, migrated: str) -> list[int]:
    lines: list[int] = []
    for tag, _, _, j1, j2 in _opcodes(original, migrated):
        if tag in ("replace", "insert"):
            lines.extend(range(j1 + 1, j2 + 1))
    return lines
