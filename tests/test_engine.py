"""The engine's shortcuts around libcst must give what libcst's public road gives."""

import pathlib

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ScopeProvider

from tf_grl_migrate.analysis import _Collector, _scopes

CASES = pathlib.Path(__file__).parent / "cases"
SOURCES = sorted([*(CASES / "rewrite").glob("*/before.py"), *(CASES / "refuse").glob("*/before.py")])[::4]


def _summary(mapping):
    out = {}
    for node, scope in mapping.items():
        if scope is None:
            out[node] = None
            continue
        names = sorted({a.name for a in scope.assignments})
        reads = sorted((a.node.value if isinstance(a.node, cst.Name) else type(a.node).__name__,
                        len(a.referents)) for a in scope.accesses)
        out[node] = (type(scope).__name__, tuple(names), tuple(reads))
    return out


@pytest.mark.parametrize("path", SOURCES, ids=[p.parent.name for p in SOURCES])
def test_scopes_are_libcsts_own(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    public = _summary(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider))
    assert _summary(_scopes(MetadataWrapper(module, unsafe_skip_copy=True))) == public
    collector = _Collector()
    module.visit(collector)  # the planner's way: the stores from its own walk
    assert _summary(_scopes(MetadataWrapper(module, unsafe_skip_copy=True), collector.stored_names())) == public


CONTEXT_SOURCES = [
    "a, (b, [c, *d]) = e\nf.g, h[i] = j\nk: int = l\nm += n\nif (o := p):\n    pass\n"
    "for q, r.s in t:\n    del u, v[w]\n[x for y, z in aa if (bb := cc)]\n",
    "import a.b as c\nfrom d import e as f, g\ntry:\n    pass\nexcept E as h:\n    pass\n"
    "with i as (j, k), l as m.n:\n    pass\n",
    "class A(B, metaclass=C):\n    d: int\n    def e(self, f=g, *h, i: j = k, **l) -> m:\n"
    "        n = lambda o, *p: q\n        global r\n        r = [s for [t] in u]\n",
    "match a:\n    case [b, *c] | {'d': e, **f} | G(h=i) as j:\n        pass\n",
]


@pytest.mark.parametrize("source", [*CONTEXT_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_stored_names_are_libcsts_store_context(source):
    """The planner's walk gathers the Names libcst's ExpressionContextProvider says STORE of (the
    one thing scope analysis asks it), so that provider's own walk is not needed."""
    from libcst.metadata import ExpressionContext, ExpressionContextProvider

    module = cst.parse_module(source)
    collector = _Collector()
    module.visit(collector)
    contexts = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ExpressionContextProvider)
    want = {n for n, context in contexts.items() if isinstance(n, cst.Name) and context == ExpressionContext.STORE}
    assert set(collector.stored_names()) == want


POSITION_SOURCES = [
    "import tensorflow as tf\n\n\n# a comment\n@tf.RegisterGradient('R')  # trailing\ndef _r(op, grad):\n"
    "    return -grad\n\n\nclass A:\n\n    def f(self, x):\n        if x:\n            pass\n",
    "x = 1; y = (2,\n  3)\r\nz = '''a\r\nb'''\r\nif x:\r\n\tw = y\r\n",
    "#!/usr/bin/env python\n# header\n\ndef f():\n    '''doc\n    more'''\n    return [k\n for k in 'ab']\n# footer\n",
    "a = 1\rb = 2\rif a:\r    c = 3\r",
]


@pytest.mark.parametrize("source", [*POSITION_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_positions_are_libcsts_own(source):
    """nodes.Positions gives every node the start libcst's PositionProvider records for it."""
    from libcst.metadata import PositionProvider

    from tf_grl_migrate.traversal import Positions

    module = cst.parse_module(source)
    collector = _Collector()
    module.visit(collector)
    public = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, collector.parents)
    nodes = [n for n in collector.order if n is not module]
    assert nodes
    for node in nodes:
        want = public[node].start
        assert positions.start(node) == (want.line, want.column), (type(node).__name__, _code_of(module, node))


def _code_of(module, node):
    return module.code_for_node(node)[:60]


WALK_SOURCES = [
    "a = f'{b}{c!r}{d:>{e}}{g=}'\nh = f'{i:{j}}'\n",
    "x = f'{y:>10}'\nz = f'{w}'\n",
    "async def f(a, /, b: int = 1, *c, d, **e) -> None:\n    async with g as h, i:\n        await j\n"
    "    [k async for k in l]\n    lambda m=n: (o := p)\n    del q[r:s:t], u.v\n",
    "match a:\n    case [b, *c] | {'d': e, **f} | G(h=i) as j if k:\n        pass\n",
]


@pytest.mark.parametrize("order", ["as_written", "reversed"])
def test_quick_walk_visits_what_libcst_visits_in_its_order(order):
    """QuickVisitor.walk reads children field by field, in the order libcst's own visit has; the
    order is learnt per node type, and again when a field it only visits when set turns up (an
    f-string's format spec), whichever kind of node comes first."""
    from tf_grl_migrate import traversal as nodes

    sources = [*WALK_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)]
    nodes._FIELDS.clear()
    for source in sources if order == "as_written" else sources[::-1]:
        module = cst.parse_module(source)
        theirs, ours = _Collector(), _Collector()
        module.visit(theirs)
        ours.walk(module)
        assert list(ours.order) == list(theirs.order)
        assert ours.parents == theirs.parents


class _Recorder(cst.CSTVisitor):
    """Every hook libcst calls, field hooks included (ClassDef and Call fields, and a visit that
    visits its children itself and skips libcst's own walk of them, as ScopeVisitor's do)."""

    def __init__(self):
        self.calls = []

    def on_visit(self, node):
        self.calls.append(("visit", type(node).__name__))
        if isinstance(node, cst.Lambda):
            node.body.visit(self)
            return False
        return True

    def on_leave(self, original_node):
        self.calls.append(("leave", type(original_node).__name__))

    def visit_ClassDef_bases(self, node):
        self.calls.append(("visit field", "bases"))

    def leave_ClassDef_bases(self, node):
        self.calls.append(("leave field", "bases"))

    def visit_Call_args(self, node):
        self.calls.append(("visit field", "args"))

    def leave_Call_args(self, node):
        self.calls.append(("leave field", "args"))


def test_a_visitor_that_walks_itself_sees_libcsts_calls_in_libcsts_order():
    """A visitor class registered with walks_itself takes the quick walk for every node.visit(it),
    also those its own hooks start, with its field hooks at the places libcst calls them; any
    other visitor still takes libcst's own visit, which the registration leaves untouched."""
    from tf_grl_migrate import traversal

    class Quick(traversal.Quick, _Recorder):
        pass

    traversal.walks_itself(Quick)
    sources = [*WALK_SOURCES, "class A(B, C, metaclass=D):\n    e = f(g, h=i)\n    k = lambda: l(m)\n",
               *(p.read_text(encoding="utf-8") for p in SOURCES)]
    for source in sources:
        module = cst.parse_module(source)
        theirs, ours = _Recorder(), Quick()
        assert module.visit(theirs) is not None
        assert module.visit(ours) is module
        assert ours.calls == theirs.calls
    transformed = cst.parse_module("a = b\n").visit(_Renamer())
    assert transformed.code == "a = c\n"  # a transformer is still libcst's own walk


class _Renamer(cst.CSTTransformer):
    def leave_Name(self, original_node, updated_node):
        return updated_node.with_changes(value="c") if original_node.value == "b" else updated_node


@pytest.mark.parametrize("arity", range(1, 9))
def test_generated_functions_take_one_distinct_parameter_per_op_input(arity):
    from tf_grl_migrate.nodes import input_names

    names = input_names(arity)
    assert len(names) == len(set(names)) == arity and all(n.isidentifier() for n in names)


def test_a_field_hook_set_on_a_visitor_class_later_is_called():
    """Hooks found once per class are found again when a hook is set on the class afterwards."""
    from tf_grl_migrate.traversal import QuickVisitor

    class Fields(QuickVisitor):
        pass

    seen = []
    module = cst.parse_module("f(a, b)\n")
    Fields().walk(module)
    Fields.visit_Call_args = lambda self, node: seen.append(len(node.args))
    Fields().walk(module)
    assert seen == [2]
