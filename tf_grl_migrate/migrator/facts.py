"""Repository facts: what each module of a run registers, which gradient-name constants it binds
and imports, and which override-map targets it uses, from one pass over CPython's ``ast`` per
candidate file; then the links between modules (a block in ``model.py`` whose target is
registered in ``grads.py``), resolved before any file is rewritten.
Why it is built so: docs/design.md, "migrator/facts.py"."""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from .precheck import DEFUN, MARKER, walk
from .verdicts import Refusal

REGISTER = "RegisterGradient"
HOPS = 3  # import chains followed for a constant (names.py -> grads.py -> model.py)
Target = tuple[str, ...]  # a target expression: ("str", value) | ("name", name) | ("attr", dotted base, attribute)


@dataclass
class ModuleFacts:
    path: str
    registrations: dict = field(default_factory=dict)  # def name -> name expression (("str", v) | ("name", n))
    constants: dict = field(default_factory=dict)  # NAME -> "literal" (bound once at module level)
    modules: dict = field(default_factory=dict)  # binding -> (module spelling, level): import m / from p import m
    from_names: dict = field(default_factory=dict)  # binding -> (module spelling, level, name)
    uses: list = field(default_factory=list)  # (op type, target spelling, target ("str"|"name"|"attr", ...))
    bound_twice: set = field(default_factory=set)  # module-level names bound more than once
    grad_refs: list = field(default_factory=list)  # Defun(python_grad_func=NAME | m.NAME): the targets
    gradients: dict = field(default_factory=dict)  # module-level def -> (op reads) or why it is no (op, *grads)
    defuns: list = field(default_factory=list)  # module-level functions a Defun makes (`f = Defun(...)(g)`)
    stars: list = field(default_factory=list)  # (module spelling, level) of each `from m import *`


def to_json(facts: ModuleFacts) -> dict:
    return {"registrations": facts.registrations, "constants": facts.constants, "modules": facts.modules,
            "from_names": facts.from_names, "uses": facts.uses, "bound_twice": sorted(facts.bound_twice),
            "grad_refs": facts.grad_refs, "gradients": facts.gradients, "defuns": facts.defuns,
            "stars": facts.stars}


def from_json(path: str, data: dict) -> ModuleFacts:
    return ModuleFacts(
        path, {k: tuple(v) for k, v in data["registrations"].items()}, dict(data["constants"]),
        {k: tuple(v) for k, v in data["modules"].items()}, {k: tuple(v) for k, v in data["from_names"].items()},
        [(op, spelling, tuple(target)) for op, spelling, target in data["uses"]], set(data["bound_twice"]),
        [tuple(t) for t in data["grad_refs"]],
        {k: v if isinstance(v, str) else tuple(v) for k, v in data["gradients"].items()}, list(data["defuns"]),
        [tuple(star) for star in data["stars"]])


@dataclass(frozen=True)
class External:
    """A target of this module registered in another module of the run."""
    spelling: str  # the target expression as the source wrote it
    value: str  # the gradient name
    access: str  # how this module reaches the converted function (``grads._rev`` or ``_rev``)
    import_from: tuple[str, int] | None  # (module spelling, level) of the `from` import to add ``fn`` to, or None
    function: str
    registered_in: str  # path, for messages
    refusal: Refusal | None = None  # why the link cannot be migrated (said at the use)


@dataclass(frozen=True)
class DefunGradient:
    """A Defun's python_grad_func this module imports from another module of the run."""
    spelling: str  # as the source wrote it (``_grad``, ``grads._grad``)
    defined_in: str  # path, for messages
    reads: tuple = ()  # what it reads of its op: "inputs", "outputs"
    refusal: str = ""  # why it is no gradient a custom gradient can call, where it is none


@dataclass(frozen=True)
class ForeignUse:
    """A use, in another module of the run, of a function a Defun of this module makes, that only
    TF1's function object takes: a call passing a keyword (TF1's Defun took ``name=``; a migrated
    function takes its inputs only), or a read of one of its attributes (``f.name``)."""
    function: str
    path: str  # the using module
    line: int
    shown: str  # the call's first keyword, as ``name=`` (or ``**``); the attribute read, as ``f.name``
    cell: int | None = None  # in a notebook: the cell (1-based); ``line`` is then the cell's
    attribute: bool = False  # an attribute read, not a call

    @property
    def where(self) -> str:
        """``model.py:6``, ``train.ipynb:cell 3:2``: as a diagnostic there is written."""
        cell = f":cell {self.cell}" if self.cell is not None else ""
        return f"{os.path.basename(self.path)}{cell}:{self.line}"


@dataclass(frozen=True)
class Export:
    """A registration of this module used from other modules of the run."""
    function: str
    value: str
    arity: int
    used_in: tuple  # paths
    refusal: Refusal | None = None  # a use elsewhere could not be migrated: keep the registration (why)


@dataclass(frozen=True)
class Links:
    externals: tuple = ()
    exports: tuple = ()
    star_imported: bool = False  # another module of the run does `from this_module import *`
    gradients: tuple = ()  # DefunGradient: Defun gradients imported from another module of the run
    foreign_uses: tuple = ()  # ForeignUse: other modules of the run passing keywords to its Defuns, reading them

    def key(self) -> str:
        return repr(self)

    @property
    def only_star_imported(self) -> bool:
        """Star-imported and linked no other way: the result depends on the module's bytes and
        that one fact, so it may be screened and cached (under a key of its own)."""
        return self.star_imported and not (self.externals or self.exports or self.gradients or self.foreign_uses)


def gather(path: str, source: str) -> ModuleFacts | None:
    """The facts of one module, or None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    facts = ModuleFacts(path)
    seen: dict[str, int] = {}
    for stmt in tree.body:
        for name in _bound_names(stmt):
            seen[name] = seen.get(name, 0) + 1
        _module_statement(facts, stmt)
    facts.bound_twice = {n for n, count in seen.items() if count > 1}
    for node in walk(tree):
        if isinstance(node, ast.Call):
            _call(facts, node, source)
    return facts


def _module_statement(facts: ModuleFacts, stmt: ast.stmt) -> None:
    """What one module-level statement binds that a link may follow: a string constant, an
    import, a def (a registration, a Defun gradient), ``RegisterGradient(NAME)(fn)``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        value = stmt.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            facts.constants[stmt.targets[0].id] = value.value
        elif _is_defun_call(value.func if isinstance(value, ast.Call) else None):
            facts.defuns.append(stmt.targets[0].id)  # f = Defun(...)(g)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        _imported(facts, stmt)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        facts.gradients[stmt.name] = _as_gradient(stmt)
        facts.defuns += [stmt.name] if any(_is_defun_call(d) for d in stmt.decorator_list) else []
        for deco in stmt.decorator_list:
            name = _registered_name(deco)
            if name is not None:
                facts.registrations[stmt.name] = name
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value  # RegisterGradient(NAME)(fn)
        name = _registered_name(call.func)
        if name is not None and len(call.args) == 1 and isinstance(call.args[0], ast.Name):
            facts.registrations[call.args[0].id] = name


def _imported(facts: ModuleFacts, stmt: ast.Import | ast.ImportFrom) -> None:
    """What a module-level import binds: modules (``import m``) and names (``from p import n``)."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                facts.modules[alias.asname] = (alias.name, 0)
            else:
                facts.modules[alias.name.split(".")[0]] = (alias.name.split(".")[0], 0)
                if "." in alias.name:
                    facts.modules[alias.name] = (alias.name, 0)  # `pkg.grads.fn` spelled in full
    elif stmt.module != "__future__":
        for alias in stmt.names:
            if alias.name != "*":
                facts.from_names[alias.asname or alias.name] = (stmt.module or "", stmt.level, alias.name)
            else:
                facts.stars.append((stmt.module or "", stmt.level))


def _call(facts: ModuleFacts, node: ast.Call, source: str) -> None:
    """A call anywhere in the module: a Defun's ``python_grad_func=`` naming an import's function,
    or an override map's targets."""
    if _called(node.func) == DEFUN:
        for keyword in node.keywords:
            target = _target(keyword.value) if keyword.arg == "python_grad_func" else None
            if target is not None and target[0] != "str":
                facts.grad_refs.append((ast.get_source_segment(source, keyword.value), *target))
    if (isinstance(node.func, ast.Attribute) and node.func.attr == MARKER
            and len(node.args) == 1 and isinstance(node.args[0], ast.Dict)):
        for key, value in zip(node.args[0].keys, node.args[0].values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                target = _target(value)
                if target is not None:
                    facts.uses.append((key.value, ast.get_source_segment(source, value), target))


def _is_defun_call(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Call) and _called(node.func) == DEFUN


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"]
    return []


def _called(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _registered_name(node: ast.AST) -> Target | None:
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return None
    if _called(node.func) != REGISTER:
        return None
    return _target(node.args[0])


def _as_gradient(fdef: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | str:
    """What a module-level def reads of its first parameter, where it is a Defun gradient a custom
    gradient can call (``(op, *grads)``, reading of ``op`` only ``op.inputs`` and ``op.outputs``);
    else why it is not."""
    args = fdef.args
    if isinstance(fdef, ast.AsyncFunctionDef) or fdef.decorator_list:
        return "it is decorated or asynchronous"
    if not args.args or args.posonlyargs or args.kwonlyargs or args.kwarg is not None:
        return "it does not take (op, *grads)"
    op = args.args[0].arg
    reads: set[str] = set()
    counted: set[int] = set()
    for node in walk(fdef):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == op and (
                node.attr in ("inputs", "outputs") and isinstance(node.ctx, ast.Load)):
            reads.add(node.attr)
            counted.add(id(node.value))
    for node in walk(fdef):
        if isinstance(node, ast.Name) and node.id == op and id(node) not in counted and not isinstance(
                node.ctx, ast.Del):
            return f"line {node.lineno} uses `{op}` other than as {op}.inputs and {op}.outputs"
        if isinstance(node, ast.arg) and node.arg == op and node is not args.args[0]:
            return f"line {node.lineno} binds `{op}` again"
    return tuple(sorted(reads))


def _target(node: ast.expr) -> Target | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ("str", node.value)
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
        base = _dotted(node.value)
        return ("attr", base, node.attr) if base else None
    return None


class _Reach:
    """Whether a module's bytes may import from one of some modules: they spell one's name (the
    file's stem, a package's folder: what an import spells last, `grads` of `pkg/grads.py`), or
    hold a relative import and sit in line with one's folder."""

    def __init__(self, modules: Collection[str]):
        self.modules = modules
        self.stems = _Words({os.path.basename(os.path.dirname(p) if p.endswith("__init__.py") else p[:-3])
                             for p in modules})
        self.folders = {os.path.dirname(os.path.abspath(p)) for p in modules}

    def may(self, path: str, raw: bytes) -> bool:
        if self.stems.in_(raw):
            return True
        here = os.path.dirname(os.path.abspath(path))
        return _RELATIVE.search(raw) is not None and any(_in_line(here, folder) for folder in self.folders)


class _Words:
    """Whether bytes hold one of some words as a whole word: each looked for as plain bytes first
    (a regex alternation of many words is a hundred times slower over a tree's sources)."""

    def __init__(self, words: Collection[str]):
        self.words = sorted(w.encode() for w in words)
        self.set = frozenset(self.words)
        self.whole = re.compile(rb"\b(?:" + b"|".join(re.escape(w) for w in self.words) + rb")\b")

    def in_(self, raw: bytes) -> bool:
        return any(w in raw for w in self.words) and self.whole.search(raw) is not None


MODULE_LEVEL_DEFUN = re.compile(rb"^(?:@|\w+[ \t]*=[ \t]*)[\w.]*" + DEFUN.encode() + rb"\b", re.MULTILINE)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


STAR_IMPORT = re.compile(rb"import\s*\*")  # a cheap superset (no word boundary: it defeats the literal scan)


_RELATIVE = re.compile(rb"from\s*\.")
_STAR_FROM = re.compile(rb"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]*\*", re.MULTILINE)


def star_imported(paths: list[str], roots: list[str], sources: dict[str, bytes],
                  wanted: Collection[str] | None = None) -> set[str]:
    """The modules of the run that another module of it star-imports (``from GR import *``), which
    then hands on every public module-level name GR binds (its imports too). ``sources``: path ->
    bytes of the modules whose text has an ``import *``; ``wanted``: the only modules the answer
    matters for (those the run may change), where given: a source whose ``from ... import *``
    lines name none of them is not parsed."""
    run = Run(paths, roots, {}, lambda path: None)
    found = set()
    reach = _Reach(wanted) if wanted is not None else None
    for path, raw in sources.items():
        if reach is not None and not _may_star_import(run, path, raw, reach):
            continue
        try:
            tree = ast.parse(raw)
        except (SyntaxError, ValueError):
            continue
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                target = run.module_path(path, node.module or "", node.level)
                if target is not None and target != path:
                    found.add(target)
    return found


def _may_star_import(run: Run, path: str, raw: bytes, reach: _Reach) -> bool:
    """Whether the source at ``path`` may star-import a wanted module (``reach.modules``; False
    only when it cannot)."""
    names = _star_from_names(raw)  # `.mod`, `pkg.mod`: where each `import *` is on a plain line
    if names is not None:
        # a module is spelt last in its name (`pkg.mod`), so only a name ending in a wanted stem, or a
        # bare `from . import *`, is resolved
        return any(run.module_path(path, bare.decode("ascii", "replace"), len(name) - len(bare)) in reach.modules
                   for name in names
                   if not (bare := name.lstrip(b".")) or bare.rpartition(b".")[2] in reach.stems.set)
    return reach.may(path, raw)  # `from . import *` spells no stem: it names a package of the folders above


def _star_from_names(raw: bytes) -> list[bytes] | None:
    """The module each ``import *`` names, where each is a line ``from NAME import *``; else None."""
    names = []
    for star in STAR_IMPORT.finditer(raw):  # few per file: each line is looked at, not the whole text
        line = _STAR_FROM.match(raw, raw.rfind(b"\n", 0, star.start()) + 1)
        if line is None or line.end() != star.end():
            return None
        names.append(line.group(1))
    return names


def _in_line(a: str, b: str) -> bool:
    """Whether one folder holds the other (or they are one): what a relative import can reach."""
    return a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep)


class Run:
    """The facts of the modules of a run that can take part in a link, and the links between them.

    ``users``: path -> ModuleFacts of the modules holding an override map. Other modules are read
    (``read(path) -> ModuleFacts | None``) only when a user's target needs them: the module a
    target names (``grads.NAME``, ``from grads import NAME``), followed ``HOPS`` imports deep for a
    constant, and the modules a user imports, for a literal target it does not register itself.
    Targets TensorFlow registers itself (op types: ``"Identity"``) are never linked."""

    def __init__(self, paths: list[str], roots: list[str], users: Mapping[str, ModuleFacts],
                 read: Callable[[str], ModuleFacts | None]):
        self.roots = [os.path.abspath(r if os.path.isdir(r) else os.path.dirname(r) or ".") for r in roots]
        self._paths = paths
        self.facts: dict[str, ModuleFacts | None] = dict(users)
        self.users = sorted(users)
        self._read = read

    @property
    def paths(self) -> list[str]:
        return self._paths

    @functools.cached_property
    def _by_abs(self) -> dict[str, str]:  # made when a module is first looked for (most runs never do)
        return {os.path.abspath(p): p for p in self._paths if p.endswith(".py")}

    def get(self, path: str | None) -> ModuleFacts | None:
        if path is None:
            return None
        if path not in self.facts:
            self.facts[path] = self._read(path)
        return self.facts[path]

    def of(self, path: str) -> ModuleFacts:
        """The facts of a module the run has read (a user, or one a binding led to); a module that
        could not be read binds nothing the links could follow."""
        return self.get(path) or ModuleFacts(path)

    @staticmethod
    def tensorflows_own(value: str) -> bool:
        from ..knowledge import ops

        return value in ops.BUILTIN_GRADIENTS or value in ops.op_type_names()

    # -- module resolution -----------------------------------------------------------------------
    def module_path(self, user: str, spelling: str, level: int) -> str | None:
        """The run's file that ``import spelling`` (``level`` dots) means in ``user``, if one."""
        parts = spelling.split(".") if spelling else []
        if level:
            base = os.path.dirname(os.path.abspath(user))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:  # absolute: the user's folder and the folders above it, up to the widest root holding it
            # (or the folder holding that root's package)
            here = os.path.dirname(os.path.abspath(user))
            top = min((r for r in self.roots if here == r or here.startswith(r + os.sep)), key=len, default=here)
            while os.path.join(top, "__init__.py") in self._by_abs and os.path.dirname(top) != top:
                top = os.path.dirname(top)  # a root that is a package: `pkg.mod` is spelt from above it
            bases = [here]
            while here != top and os.path.dirname(here) != here:
                here = os.path.dirname(here)
                bases.append(here)
        found = []
        for base in bases:
            stem = os.path.join(base, *parts)
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if candidate in self._by_abs:
                    found.append(self._by_abs[candidate])
        return found[0] if len(set(found)) == 1 else None

    def value_of(self, path: str, target: Target, hops: int = HOPS) -> str | None:
        """The string a target expression of module ``path`` holds, following imports; None if unknown."""
        facts = self.get(path)
        if facts is None or hops < 0:
            return None
        kind = target[0]
        if kind == "str":
            return target[1]
        if kind == "name":
            name = target[1]
            if name in facts.bound_twice:
                return None
            if name in facts.constants:
                return facts.constants[name]
            origin = self._from_import(path, name)
            return self.value_of(origin[0], ("name", origin[1]), hops - 1) if origin else None
        if kind == "attr":
            base, attr = target[1], target[2]
            other = self._module_bound(path, base)
            return self.value_of(other, ("name", attr), hops - 1) if other else None
        return None

    def _module_bound(self, path: str, binding: str) -> str | None:
        facts = self.of(path)
        if binding in facts.modules and binding not in facts.bound_twice:
            module, level = facts.modules[binding]
            return self.module_path(path, module, level)
        if binding in facts.from_names and binding not in facts.bound_twice:
            module, level, name = facts.from_names[binding]
            return self.module_path(path, f"{module}.{name}" if module else name, level)
        return None

    def registered(self, value: str, user: str) -> list[tuple[str, str]]:
        """(path, function) of every module-level registration of ``value`` in the modules of the
        run that ``user`` imports (the only ones its migrated code could call)."""
        out = []
        for path in sorted(self._imported_by(user)):
            facts = self.get(path)
            if facts is None:
                continue
            for function, name in facts.registrations.items():
                if function not in facts.bound_twice and self.value_of(path, name) == value:
                    out.append((path, function))
        return out

    def _imported_by(self, path: str) -> set[str]:
        facts = self.of(path)
        found = {self.module_path(path, m, level) for m, level in facts.modules.values()}
        for module, level, name in facts.from_names.values():
            found.add(self.module_path(path, module, level))
            found.add(self.module_path(path, f"{module}.{name}" if module else name, level))
        return {f for f in found if f is not None and f != path}

    # -- links -------------------------------------------------------------------------------------
    def links(self, blocked: dict | None = None) -> dict[str, Links]:
        """Each file's slice: the targets it uses that another module registers (externals) and
        its registrations used elsewhere (exports). ``blocked``: (path, function) -> (the module
        that cannot keep its end, why), found by a previous round: both ends then stay as they are,
        and every other module on the link hears why (the blocking module says its own reason)."""
        from ..knowledge import ops

        blocked = blocked or {}
        externals: dict[str, dict] = {}
        exports: dict[tuple[str, str], dict] = {}
        for path in self.users:
            facts = self.of(path)
            local = {n[1] for n in facts.registrations.values() if n[0] == "str"}
            for op_type, spelling, target in facts.uses:
                found = self._registered_elsewhere(path, local, target)
                op = ops.OP_TYPES.get(op_type) if found is not None else None
                if found is None or op is None:
                    continue
                value, reg_path, function = found
                access, import_from, refusal = self._access(path, reg_path, function)
                origin, why = blocked.get((reg_path, function), (None, None))
                if refusal is None and why is not None and origin != path:
                    refusal = Refusal.of("GRL110", "kept_by", name=spelling, file=os.path.basename(reg_path),
                                         origin=os.path.basename(origin), **why.passed_on())
                externals.setdefault(path, {})[spelling] = External(
                    spelling, value, access, import_from, function, reg_path, refusal)
                entry = exports.setdefault((reg_path, function), {"value": value, "arity": set(), "used_in": set(),
                                                                  "refusal": why, "origin": origin})
                entry["arity"].add(op.arity)
                entry["used_in"].add(path)
                if refusal and not entry["refusal"]:
                    entry["refusal"] = Refusal.of("GRL110", "use_not_migrated", file=os.path.basename(path),
                                                  **refusal.passed_on())
                    entry["origin"] = path
        out: dict[str, Links] = {}
        for path in self.users:
            gradients = self._defun_gradients(path)
            if gradients:
                out[path] = Links(gradients=gradients)
        for (reg_path, function), entry in sorted(exports.items()):
            refusal = entry["refusal"]
            if len(entry["arity"]) != 1 and not refusal:
                refusal = Refusal.of("GRL106", "arities_elsewhere")
            export = Export(function, entry["value"], min(entry["arity"]), tuple(sorted(entry["used_in"])), refusal)
            links = out.get(reg_path, Links())
            out[reg_path] = dataclasses.replace(links, exports=(*links.exports, export))
            if refusal:  # the users hear why
                for user in entry["used_in"] - {entry["origin"]}:
                    for spelling, ext in list(externals.get(user, {}).items()):
                        if ext.function == function and ext.registered_in == reg_path and not ext.refusal:
                            externals[user][spelling] = dataclasses.replace(ext, refusal=Refusal.of(
                                "GRL110", "kept_elsewhere", name=spelling, file=os.path.basename(reg_path),
                                **refusal.passed_on()))
        for path, by_spelling in sorted(externals.items()):
            links = out.get(path, Links())
            out[path] = dataclasses.replace(links, externals=tuple(by_spelling[s] for s in sorted(by_spelling)))
        return out

    def _defun_gradients(self, path: str) -> tuple:
        """The Defun gradients ``path`` imports from other modules of the run, each with what it
        reads of its op (or why a custom gradient cannot call it)."""
        found = {}
        for spelling, *target in self.of(path).grad_refs:
            if target[0] == "name":
                origin = self._from_import(path, target[1]) if target[1] not in self.of(path).bound_twice else None
                other, name = origin if origin else (None, "")
            else:
                other, name = self._module_bound(path, target[1]), target[2]
            where = self._defined(other, name, HOPS) if other is not None else None
            if where is not None:
                defined_in, summary = where
                found[spelling] = DefunGradient(spelling, defined_in, *(
                    ((), summary) if isinstance(summary, str) else (summary, "")))
        return tuple(found[s] for s in sorted(found))

    def defun_functions(self, defining: Collection[str]) -> dict[str, set[str]]:
        """path -> the functions its Defuns make at module level, for each of ``defining`` with any."""
        made = {path: set(self.of(path).defuns) for path in defining}
        return {path: names for path, names in made.items() if names}

    def foreign_uses(self, made: Mapping[str, set[str]], read_raw: Callable[[str], bytes | None],
                      passed: Callable[[str], None] = lambda path: None) -> dict[str, tuple]:
        """path -> the uses (ForeignUse), in the other modules of the run, of a function
        ``made[path]`` names (``defun_functions``) that only TF1's function object takes.
        ``read_raw`` gives a module's bytes (None: not to be looked at); ``passed(path)`` is told
        of each module read whose bytes alone rule a use out (one spelling a name may gain a use
        when another module's imports change).

        A module is parsed only where its bytes spell one of those names (every use does: ``f(...)``,
        ``ops.f``, the import of a re-export) and can reach a module that has them: they spell its
        name (``ops`` of ``pkg/ops.py``, ``pkg`` of ``pkg/__init__.py``), or a relative import
        (``from . import *``) within its folders. Those modules are the Defuns' own, then those
        that import one of the functions from them (a re-export, under the same name)."""
        if not made:
            return {}
        names = set().union(*made.values())
        spelt = _Words(names)
        spelling = []  # (path, bytes) of the modules that spell a name: few, kept until they are placed
        for path in self._paths:
            raw = read_raw(path) if path.endswith((".py", ".ipynb")) and path not in made else None
            if raw is None:
                continue
            if spelt.in_(raw):
                spelling.append((path, raw))
            else:
                passed(path)  # no use can be spelt there
        found: dict[str, list[ForeignUse]] = {}
        having = set(made)  # the modules a use must import from: grows by the re-exports found
        while spelling:
            reach = _Reach(having)
            now = [(path, raw) for path, raw in spelling if reach.may(path, raw)]
            if not now:
                break
            spelling = [item for item in spelling if item not in now]
            for path, raw in now:
                for made_in, use in self._foreign_uses_in(path, raw, made, names):
                    found.setdefault(made_in, []).append(use)
                facts = self.of(path)
                if any(name in names and self.module_path(path, module, level) in having
                       for module, level, name in facts.from_names.values()):
                    having.add(path)
        return {path: tuple(sorted(uses, key=lambda u: (u.path, u.cell or 0, u.line))) for path, uses in found.items()}

    def _foreign_uses_in(self, path: str, raw: bytes, made: Mapping[str, set[str]],
                         names: set[str]) -> list[tuple[str, ForeignUse]]:
        from . import notebooks

        cells = None
        try:
            if path.endswith(".ipynb"):  # its code cells, as one module (what the run migrates of it)
                code, indices, _, _ = notebooks.glue(notebooks.load(raw.decode("utf-8")))
                cells = (code, indices)
                if self.facts.get(path) is None:  # (a notebook's bytes are no module: its cells are)
                    self.facts[path] = gather(path, code)
            tree = ast.parse(raw if cells is None else cells[0])
        except (SyntaxError, ValueError, notebooks.NotebookError):
            return []
        # what the functions are called here: their names, and the names `from m import f as g` binds
        spelt = names | {a.asname for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
                         if a.name in names and a.asname}

        def named(expr: ast.expr) -> bool:  # `f`, `m.f`: only such an expression is resolved (a file has many)
            return expr.id in spelt if isinstance(expr, ast.Name) else isinstance(expr, ast.Attribute) and (
                expr.attr in names)

        out = []
        for node in walk(tree):
            if isinstance(node, ast.Call) and node.keywords and named(node.func):
                used, keyword = node.func, node.keywords[0]
                shown = f"{keyword.arg}=" if keyword.arg else "**"
            elif isinstance(node, ast.Attribute) and named(node.value):
                used, shown = node.value, node.attr
            else:
                continue
            callee = self._callee(path, used)
            if callee is not None and callee[1] in made.get(callee[0], ()):
                cell, line = notebooks.cell_of_line(*cells, node.lineno) if cells else (None, node.lineno)
                attribute = isinstance(node, ast.Attribute)
                shown = f"{ast.unparse(used)}.{shown}" if attribute else shown
                out.append((callee[0], ForeignUse(callee[1], path, line, shown, cell, attribute)))
        return out

    def _star_imported(self, path: str, name: str) -> tuple[str, str] | None:
        """(the module of the run, ``name``) where ``path`` binds ``name`` only by a star-import of a
        module of the run that makes it with a Defun (the last such import wins, as in Python)."""
        facts = self.of(path)
        if name in facts.modules or name in facts.gradients or name in facts.constants:
            return None
        for module, level in reversed(facts.stars):
            other = self.module_path(path, module, level)
            if other is not None and name in self.of(other).defuns:
                return other, name
        return None

    def _callee(self, path: str, func: ast.expr) -> tuple[str, str] | None:
        """(module of the run, name in it) of the function a call in ``path`` calls, where it is an
        import's (``f``, ``m.f``, ``pkg.m.f``), following re-exports; else None."""
        if isinstance(func, ast.Name):
            origin = self._from_import(path, func.id) or self._star_imported(path, func.id)
        elif isinstance(func, ast.Attribute) and (base := _dotted(func.value)) is not None:
            other = self._module_bound(path, base)
            origin = (other, func.attr) if other is not None else None
        else:
            return None
        for _ in range(HOPS):  # a re-export: `from .ops import f` in the module the call imports from
            if origin is None or origin[1] in self.of(origin[0]).defuns:
                break
            origin = self._from_import(*origin)
        return origin

    def _defined(self, path: str, name: str, hops: int) -> tuple[str, tuple[str, ...] | str]:
        """(path, summary) of the module-level def ``name`` of ``path`` means, following
        re-exports (``from .grads import g``); the summary is why it is no def where it is none."""
        facts = self.of(path)
        if name in facts.bound_twice:
            return path, f"`{name}` is bound more than once in {os.path.basename(path)}"
        if name in facts.gradients:
            return path, facts.gradients[name]
        origin = self._from_import(path, name) if hops > 0 else None
        if origin is not None:  # a re-export: `from .grads import g`
            return self._defined(*origin, hops - 1)
        return path, f"`{name}` is no function defined in {os.path.basename(path)}"

    def _from_import(self, path: str, name: str) -> tuple[str, str] | None:
        """(the module of the run, the name in it) that ``from m import name`` in ``path`` reads."""
        facts = self.of(path)
        if name not in facts.from_names:
            return None
        module, level, imported = facts.from_names[name]
        other = self.module_path(path, module, level)
        return (other, imported) if other is not None else None

    def _registered_elsewhere(self, path: str, local: set[str], target: Target) -> tuple[str, str, str] | None:
        """(the gradient name, the registering module, its function) where a map target of
        ``path`` names exactly one registration of another module of the run; else None."""
        if target[0] == "str" and (target[1] in local or self.tensorflows_own(target[1])):
            return None  # the cheap, common answers first: no other module is read for these
        value = self.value_of(path, target)
        if value is None or value in local or self.tensorflows_own(value):
            return None
        if value in {self.value_of(path, n) for n in self.of(path).registrations.values()}:
            return None
        where = self.registered(value, path)
        if len(where) != 1 or where[0][0] == path:
            return None
        return value, where[0][0], where[0][1]

    def _access(self, user: str, reg_path: str, function: str) -> tuple[str, tuple[str, int] | None, Refusal | None]:
        """(access, import_from, refusal): how ``user`` reaches ``function`` of ``reg_path``."""
        facts = self.of(user)
        for binding in sorted(facts.modules):
            if binding not in facts.bound_twice and self._module_bound(user, binding) == reg_path:
                return f"{binding}.{function}", None, None
        for binding in sorted(facts.from_names):
            module, level, name = facts.from_names[binding]
            if binding in facts.bound_twice:
                continue
            if self.module_path(user, f"{module}.{name}" if module else name, level) == reg_path:
                return f"{binding}.{function}", None, None
            if self.module_path(user, module, level) == reg_path:
                if function in facts.constants or function in facts.from_names or any(
                        function == f for f in facts.registrations) or function in facts.modules:
                    return "", None, Refusal.of("GRL102", "name_taken", file=os.path.basename(reg_path),
                                                function=function)
                return function, (module, level), None
        return (
            "",
            None,
            Refusal.of("GRL102", "not_imported", file=os.path.basename(reg_path)),
        )
