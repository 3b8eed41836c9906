"""Small facts about libcst nodes that both the analysis and the rewrite read: source text,
names loaded by an expression, dotted attributes, import lines, the scopes code can see, fresh names,
templates parsed once."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Union

import libcst as cst

from . import precheck
from .scopes import ClassScope, Scope
from .traversal import NodeMap, QuickVisitor, Recorded, code_for, written_tokens

Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]  # a BaseStatement's two kinds


def code_of(node: cst.CSTNode) -> str:
    dotted = _dotted_code(node)
    return dotted if dotted is not None else code_for(_BARE, node)


_BARE = cst.Module(body=[])  # the layout code_of writes a node in: libcst's defaults


def _dotted_code(node: cst.CSTNode) -> str | None:
    """The code of a bare name or a dotted one (``tf.nn.relu``: no parentheses, no space around
    a dot), which import lines and calls are full of, without libcst's code generation; else None.
    By exact type: an isinstance on a libcst node (an ABC) costs more than this saves."""
    if type(node) is cst.Name:
        return None if node.lpar or node.rpar else node.value
    if type(node) is not cst.Attribute or node.lpar or node.rpar:
        return None
    before, after = node.dot.whitespace_before, node.dot.whitespace_after
    if (type(before) is not cst.SimpleWhitespace or before.value
            or type(after) is not cst.SimpleWhitespace or after.value):
        return None
    head, attr = _dotted_code(node.value), _dotted_code(node.attr)
    return None if head is None or attr is None else f"{head}.{attr}"


def quoted(node: cst.CSTNode) -> str:
    """``node``'s code as a message names it: in backticks; a notebook's magic line (which the
    notebook layer hands in as a call of ``precheck.MAGIC``) as what it is."""
    code = code_of(node)
    return "an IPython magic" if code == precheck.MAGIC else f"`{code}`"


_TEMPLATES: OrderedDict[str, Statement] = OrderedDict()  # text -> its statement, the most recent last
# id -> each of those statements (held by both), with its code's tokens per layout (template_tokens)
_TEMPLATE_IDS: dict[int, tuple[Statement, dict[tuple[str, str], list | None]]] = {}
_TEMPLATES_KEPT = 1024
_TEMPLATES_LOCK = threading.Lock()


def parsed_statement(source: str) -> Statement:
    """``cst.parse_statement``, once per text: the generated code repeats a few templates, and a
    libcst node is immutable, so one parsed node serves every module that needs that text (the
    last 1024 texts are kept). The rewrite writes such a statement from its code generated once
    per layout (``template_tokens``)."""
    with _TEMPLATES_LOCK:  # a library caller may migrate in threads
        node = _TEMPLATES.get(source)
        if node is not None:
            _TEMPLATES.move_to_end(source)
            return node
    parsed = cst.parse_statement(source)
    with _TEMPLATES_LOCK:
        node = _TEMPLATES.setdefault(source, parsed)  # another thread's, if it came first
        _TEMPLATE_IDS.setdefault(id(node), (node, {}))
        while len(_TEMPLATES) > _TEMPLATES_KEPT:
            _, old = _TEMPLATES.popitem(last=False)
            del _TEMPLATE_IDS[id(old)]  # its tokens with it: an id used again never finds them
    return node


INDENT = object()  # in template_tokens: where the indent of the block the statement is written in goes


def template_tokens(node: cst.CSTNode, default_indent: str, default_newline: str) -> list | None:
    """The code of ``node``, a statement ``parsed_statement`` made (else None), as a module of that
    layout writes it, in tokens: each ``INDENT`` stands for the indent of the block it is written
    in (libcst writes a block's indent as tokens of their own, and nothing else of a statement
    depends on where it stands). Generated once per template and layout."""
    entry = _TEMPLATE_IDS.get(id(node))
    if entry is None or entry[0] is not node:
        return None
    by_layout = entry[1]
    if (default_indent, default_newline) not in by_layout:  # None: this libcst cannot: generated in place
        by_layout[(default_indent, default_newline)] = written_tokens(node, default_indent, default_newline, [INDENT])
    return by_layout[(default_indent, default_newline)]


@functools.lru_cache(maxsize=1024)
def parsed_expression(source: str) -> cst.BaseExpression:
    """``cst.parse_expression``, once per text (see :func:`parsed_statement`)."""
    return cst.parse_expression(source)


def string_value(expr: cst.CSTNode | None) -> str | None:
    """The value of a string literal (not a bytes one, nor an f-string), else None. A one-line
    literal with no prefix and no backslash is its text between the quotes; others are evaluated
    (libcst's ``evaluated_value``: an ``ast.literal_eval``, a parse)."""
    if type(expr) is cst.SimpleString:
        text = expr.value
        if text[0] in "'\"" and "\\" not in text and not text.startswith(('"""', "'''")):
            return text[1:-1]
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def receiver(call: cst.CSTNode) -> cst.BaseExpression:
    """What a ``<receiver>.method(...)`` call (an override map's) is called on."""
    return cst.ensure_type(cst.ensure_type(call, cst.Call).func, cst.Attribute).value


def is_map_call(node: object) -> bool:
    """``<expr>.gradient_override_map(...)``, not the runtime's (``tf_grl_migrate.``: migrated)."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == precheck.MARKER
        and not is_runtime_receiver(node.func)
    )


def tight_equal() -> cst.AssignEqual:
    """``=`` of a keyword argument, as TensorFlow's own code writes it (``name=x``)."""
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def with_keywords(args: Iterable[cst.Arg], keywords: Iterable[tuple[str, cst.BaseExpression]]) -> list[cst.Arg]:
    """``args`` (a call's) followed by ``name=value`` for each (name, value) of ``keywords``."""
    args = list(args)
    for name, value in keywords:
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(keyword=cst.Name(name), value=value, equal=tight_equal()))
    return args


def is_runtime_receiver(attribute: cst.Attribute) -> bool:
    return isinstance(attribute.value, cst.Name) and precheck.is_runtime_map(attribute.value.value)


def def_path(node: cst.CSTNode, parents: NodeMap) -> tuple[str, ...]:
    """The names of the functions and classes around ``node``, outermost first."""
    path = []
    around = parents.get(node)
    while around is not None:
        if isinstance(around, (cst.FunctionDef, cst.ClassDef)):
            path.append(around.name.value)
        around = parents.get(around)
    return tuple(reversed(path))


def is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)


def enclosing_scopes(scope: Scope | None) -> list[Scope]:
    """The scopes whose names code in ``scope`` can see: ``scope`` itself and every scope around
    it out to the module (whose parent is itself), less class bodies around it: Python hides a
    class body's names from the methods and functions nested in it."""
    chain: list[Scope] = []
    while scope is not None and scope not in chain:
        if not chain or not isinstance(scope, ClassScope):
            chain.append(scope)
        scope = scope.parent
    return chain


def bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return cst.ensure_type(alias.asname.name, cst.Name).value  # an import binds a plain name
    return code_of(alias.name).split(".")[0]


def respelled_text(attr: cst.Attribute, old: str, new: str) -> str:
    """``attr`` spelt ``...old`` (``tf.neg``, ``tf.random_uniform``) with ``new`` in place of
    ``old``, keeping its root (``tf.negative``, ``tf.compat.v1.random_uniform``)."""
    prefix: cst.BaseExpression = attr
    for _ in old.split("."):
        prefix = cst.ensure_type(prefix, cst.Attribute).value
    return f"{code_of(prefix)}.{new}"


def name_keyword_code(call: cst.CSTNode) -> str | None:
    """The ``name=`` a call passes (an operator, ``a - b``, passes none)."""
    return next((code_of(a.value) for a in getattr(call, "args", ()) if a.keyword is not None
                 and a.keyword.value == "name"), None)


_PLAIN = (cst.Name, cst.Attribute, cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)


def is_plain(expr: cst.CSTNode) -> bool:
    """A value read without running code the tool cannot see: names, attributes, literals and
    ``+`` / ``%`` of them (``"scope/" + name``)."""
    if isinstance(expr, cst.Attribute):
        return is_plain(expr.value)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Modulo)):
        return is_plain(expr.left) and is_plain(expr.right)
    return isinstance(expr, _PLAIN)


def is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


class _LoadNames(QuickVisitor):
    """Names read by an expression (not attribute names after a dot)."""

    def __init__(self) -> None:
        self.nodes: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.nodes.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.walk(node.value)
        return False


def load_names(expr: cst.CSTNode, walked: Recorded | None = None) -> list[cst.Name]:
    """``walked``: ``expr``'s subtree as the planner's walk recorded it (``subtree``), read
    instead of walking it again; the same names in the same order."""
    if walked is None:
        visitor = _LoadNames()
        visitor.walk(expr)
        return visitor.nodes
    found = []
    after_dot: set[int] = set()  # the names an Attribute holds after its dot
    for node in walked.nodes[walked.start:walked.end]:
        if node.__class__ is cst.Name:
            if id(node) not in after_dot:
                found.append(node)
        elif node.__class__ is cst.Attribute:
            after_dot.add(id(node.attr))
    return found


class _Attributes(QuickVisitor):
    """Outermost dotted names (``tf.image.per_image_whitening``, not its ``tf.image``), also inside
    other expressions (the ``tf.zeros_like`` of ``tf.zeros_like(grad).shape``)."""

    def __init__(self) -> None:
        self.nodes: list[cst.Attribute] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _is_dotted(node):
            self.nodes.append(node)
            return False
        return True


def _is_dotted(node: cst.BaseExpression) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def attributes_in(node: cst.CSTNode, walked: Recorded | None = None) -> list[cst.Attribute]:
    """``walked``: as load_names'."""
    if walked is None:
        visitor = _Attributes()
        visitor.walk(node)
        return visitor.nodes
    found = []
    nodes, ends, i = walked.nodes, walked.ends, walked.start
    while i < walked.end:
        here = nodes[i]
        if here.__class__ is cst.Attribute and _is_dotted(here):
            found.append(here)
            i = ends[i]  # not the dotted names inside it
        else:
            i += 1
    return found


class _Calls(QuickVisitor):
    def __init__(self) -> None:
        self.nodes: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> bool:
        self.nodes.append(node)
        return True


def calls_in(node: cst.CSTNode, walked: Recorded | None = None) -> list[cst.Call]:
    """Every call in ``node``, outer ones first. ``walked``: as load_names'."""
    if walked is not None:
        return [n for n in walked.nodes[walked.start:walked.end] if n.__class__ is cst.Call]
    visitor = _Calls()
    visitor.walk(node)
    return visitor.nodes


def mentions_in(expr: cst.CSTNode, name: str) -> bool:
    return any(n.value == name for n in load_names(expr))


def fresh_name(base: str, used: set[str]) -> str:
    name = base
    while name in used:
        name += "_"
    used.add(name)
    return name


def input_names(arity: int) -> list[str]:
    """The parameters of a generated custom-gradient function, one per op input: ``x``; ``a``,
    ``b``, ...; ``x0`` ... for an op of more than four inputs (never fewer names than inputs)."""
    if arity == 1:
        return ["x"]
    return ["a", "b", "c", "d"][:arity] if arity <= 4 else [f"x{i}" for i in range(arity)]


def operator_spelling(node: cst.BinaryOperation | cst.AugAssign | cst.UnaryOperation) -> str:
    """``a * b``, ``x -= y``, ``-a`` as the op table keys operators: ``"a * b"``, ``"a - b"``, ``"-a"``."""
    symbol = code_of(node.operator).strip()
    if isinstance(node, cst.UnaryOperation):
        return symbol + "a"
    return f"a {symbol.removesuffix('=') if isinstance(node, cst.AugAssign) else symbol} b"


def star_exports(module: cst.Module) -> set[str] | bool:
    """The names a module-level ``__all__`` lists, or True where there is none or it is not one
    list or tuple of string literals assigned once (then every public name may be handed on)."""
    found = []
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Attribute) and code_of(small.value.func.value) == "__all__"):
                return True  # `__all__.extend(...)`: not read here
            targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign)
                       else [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else [])
            if any(isinstance(t, cst.Name) and t.value == "__all__" for t in targets):
                found.append(small)
    if len(found) != 1 or not isinstance(found[0], cst.Assign) or not isinstance(found[0].value, (cst.List, cst.Tuple)):
        return True
    names: set[str] = set()
    for element in found[0].value.elements:
        value = element.value
        if not isinstance(element, cst.Element) or not isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
            return True
        text = string_value(value)
        if text is None:
            return True
        names.add(text)
    return names
