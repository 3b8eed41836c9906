"""The engine's shortcuts around libcst must give what libcst's public road gives."""

import pathlib
import sys

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from tf_grl_migrate.migrator.analysis import Collector

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
import check_scopes  # tools/ is not a package

CASES = pathlib.Path(__file__).parent / "cases"
SOURCES = sorted([*(CASES / "rewrite").glob("*/before.py"), *(CASES / "refuse").glob("*/before.py")])[::4]

# Scope rules with corners: stores through tuples and stars, comprehensions (the first iterable
# read outside), class scopes hidden from their methods, global/nonlocal, dotted imports, a read
# before the binding in its own scope, string annotations and typing's helpers, walrus, match.
SCOPE_SOURCES = [
    "a, (b, [c, *d]) = e\nf.g, h[i] = j\nk: int = l\nm += n\nif (o := p):\n    pass\n"
    "for q, r.s in t:\n    del u, v[w]\n[x for y, z in aa if (bb := cc)]\n",
    "import a.b as c\nfrom d import e as f, g\ntry:\n    pass\nexcept E as h:\n    pass\n"
    "with i as (j, k), l as m.n:\n    pass\n",
    "class A(B, metaclass=C):\n    d: int\n    def e(self, f=g, *h, i: j = k, **l) -> m:\n"
    "        n = lambda o, *p: q\n        global r\n        r = [s for [t] in u]\n",
    "match a:\n    case [b, *c] | {'d': e, **f} | G(h=i) as j:\n        pass\n",
    "import os.path\nimport tensorflow as tf\nfrom tensorflow.python.framework import ops as O\n"
    "x = os.path.join(tf.nn.relu, O.RegisterGradient)\ny = x\nx = 2\ndef f():\n    z = x\n    x2 = z\n"
    "    def g():\n        nonlocal z\n        z = 1\n        return z + x2\n    return g\n",
    "class K:\n    v = 1\n    w = [v for _ in range(3)]\n    u = [i for i in range(v)]\n"
    "    def m(self):\n        return v\nv = 2\nprint(v)\nv = v + 1\n",
    "from typing import cast, List, TypeVar, Literal\nimport typing as t\nT = TypeVar('T', bound='Bound')\n"
    "def f(a: 'List[Thing]', b: \"t.Optional['Other']\") -> 'Ret':\n    c = cast('Kind', a)\n"
    "    d: Literal['not_a_name'] = b\n    return [x for x in c if x]\nclass Thing: pass\n",
    "def f(a=lambda: b, *, c=[d for d in e]):\n    print(len(a), f)\n    for f2 in g:\n        f2 = f2\n"
    "    with h() as i, j:\n        k = {l: m for l, m in i}\n    return (n := 1) + n\n",
    "import a\nimport a.b\nimport a.b.c as d\na.b.c.x()\nd.y\na.z().w\n"
    "from .. import r\nfrom .s import u as v\nr.q(v)\n",
    "type Alias[K] = dict[K, int]\nclass Box[T](Base[T], metaclass=M):\n    item: T\n"
    "    def get[U](self, default: U) -> T | U:\n        return self.item or default\n"
    "@deco\ndef ident[V: int, *Ts, **P](x: V) -> V:\n    return x\n",
]


@pytest.mark.parametrize("source", [*SCOPE_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_bindings_answer_as_libcsts_scope_provider(source):
    """bindings.Bindings, gathered in the planner's walk, gives what libcst's public ScopeProvider
    gives: the scope of every statement and expression, the qualified names of every name,
    attribute and call, what every read may see, and every binding with the reads that see it
    (tools/check_scopes.py, which also runs over whole trees)."""
    assert check_scopes.differences(source, limit=5) == []


def test_bindings_list_reads_and_bindings_in_source_order():
    """What a message reports first does not hang on where objects happen to live in memory."""
    module = cst.parse_module("def f(x):\n    return x\n\na = f(1)\nb = f(2)\nc = [f]\nf = 3\n")
    collector = Collector()
    collector.walk(module)
    scopes = collector.bindings.finish()
    function = module.body[0]
    binding = next(a for a in scopes.get(function).assignments["f"] if a.node is function)
    where = [collector.order[a.node] for a in binding.references]
    assert len(where) == 3 and where == sorted(where)
    assert [type(a.node).__name__ for a in scopes.get(function).assignments["f"]] == ["FunctionDef", "Name"]


POSITION_SOURCES = [
    "import tensorflow as tf\n\n\n# a comment\n@tf.RegisterGradient('R')  # trailing\ndef _r(op, grad):\n"
    "    return -grad\n\n\nclass A:\n\n    def f(self, x):\n        if x:\n            pass\n",
    "x = 1; y = (2,\n  3)\r\nz = '''a\r\nb'''\r\nif x:\r\n\tw = y\r\n",
    "#!/usr/bin/env python\n# header\n\ndef f():\n    '''doc\n    more'''\n    return [k\n for k in 'ab']\n# footer\n",
    "a = 1\rb = 2\rif a:\r    c = 3\r",
    "class A:\n  def f(self) -> 'R':\n      if x:\n          y = (1,\n               2)\n      elif z:  # c\n"
    "          pass\n      else:\n          w = f(a,\n      b)\n  # trailing\n\n  @d\n  def g(self): return 1\n",
    "try:\n    a\nexcept (E,\n        F) as e:\n    b\nelse:\n    c\nfinally:\n    d\nfor i in x: y; z\n"
    "while q:\n    pass\nelse:\n    r\n",
    # line breaks written by leaves only: a continuation, an f-string's text, comments in brackets
    "x = 1 + \\\n    2\ny = f'''a\n{x}\nb{x!r:>{3}}\n'''\nz = [  # c\n\n    1,\n]\n"
    "if (x and\n        y):  # d\n    w = z\n",
    # statements placed without generating code: leading comments, tabs and spaces, async heads
    "async def f():\n\t# c\n\n\tasync with a as b:\n\t\t# d\n\t\tawait b\n\tif x:  # e\n\n\t    y = 1; z = 2\n"
    "\t    # f\n\t    while y:\n\t      del y\n# g\nclass C: pass\n",
]


@pytest.mark.parametrize("source", [*SCOPE_SOURCES, *POSITION_SOURCES,
                                    *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_collectors_read_from_the_walks_record_find_what_a_walk_finds(source):
    """attributes_in, load_names and calls_in over a subtree the planner's walk recorded give the nodes a
    walk of their own gives, in its order; the record declines a subtree holding a comprehension
    (its fields were read out of libcst's order) and a node it never met."""
    from tf_grl_migrate.migrator.nodes import attributes_in, calls_in, load_names

    module = cst.parse_module(source)
    collector = Collector()
    collector.walk(module)
    comprehensions = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
    declined = 0
    for node in collector.nodes:
        walked = collector.subtree(node)
        if walked is None:
            declined += 1
            assert any(isinstance(n, comprehensions) for n in collector.nodes[collector.order[node]:])
            continue
        assert walked.nodes[walked.start] is node
        assert list(map(id, attributes_in(node, walked))) == list(map(id, attributes_in(node)))
        assert list(map(id, load_names(node, walked))) == list(map(id, load_names(node)))
        assert list(map(id, calls_in(node, walked))) == list(map(id, calls_in(node)))
    assert declined < len(collector.nodes)
    assert collector.subtree(cst.Name("fresh")) is None


@pytest.mark.parametrize("source", [*POSITION_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_positions_are_libcsts_own(source):
    """nodes.Positions gives every node the start libcst's PositionProvider records for it."""
    from libcst.metadata import PositionProvider

    from tf_grl_migrate.migrator.traversal import Positions

    module = cst.parse_module(source)
    collector = Collector()
    collector.walk(module)
    public = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, collector.parents, collector.breaks_before)
    nodes = [n for n in collector.nodes if n is not module]
    assert nodes
    for node in nodes:
        want = public[node].start
        assert positions.start(node) == (want.line, want.column), (type(node).__name__, _code_of(module, node))


@pytest.mark.parametrize("source", [*POSITION_SOURCES, "x = 1\n\n# no line break at the end", "",
                                    *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_code_is_libcsts_own(source):
    """traversal.code_for writes every node (and the module) as libcst's own ``code_for_node``."""
    from tf_grl_migrate.migrator.traversal import code_for

    module = cst.parse_module(source)
    assert code_for(module, module) == module.code
    collector = Collector()
    collector.walk(module)
    for node in collector.nodes:
        try:
            want = module.code_for_node(node)
        except Exception as exc:  # noqa: BLE001 - one only its parent writes (an annotation's `:` or `->`)
            with pytest.raises(type(exc)):
                code_for(module, node)
            continue
        assert code_for(module, node) == want, type(node).__name__


@pytest.mark.parametrize("source", [*POSITION_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_spans_name_the_statements_whose_code_they_stand_for(source):
    """Collector.span places each statement in the module's ``ast`` as the safety net finds it:
    the statements found there are those its own code parses to (``a; b`` is two); a decorated
    def has no span, and a statement whose text ends below ast's end (a comment after its block)
    falls back to its code."""
    import ast

    from tf_grl_migrate.migrator import safety

    module = cst.parse_module(source)
    collector = Collector()
    collector.walk(module)
    original = safety._Original(source, None)
    placed = 0
    for node in collector.nodes:
        span = collector.span(node, module.default_indent)
        if span is None:
            continue
        code = module.code_for_node(node)
        fell_back = []
        found = original.statements(safety.Span(span.line, span.column, span.last, span.count,
                                                lambda code=code, fell_back=fell_back: fell_back.append(code) or code))
        assert [ast.dump(s) for s in found] == [ast.dump(s) for s in ast.parse(code).body], code
        placed += not fell_back
    assert placed


def _code_of(module, node):
    return module.code_for_node(node)[:60]


WALK_SOURCES = [
    "a = f'{b}{c!r}{d:>{e}}{g=}'\nh = f'{i:{j}}'\n",
    "x = f'{y:>10}'\nz = f'{w}'\n",
    "async def f(a, /, b: int = 1, *c, d, **e) -> None:\n    async with g as h, i:\n        await j\n"
    "    [k async for k in l]\n    lambda m=n: (o := p)\n    del q[r:s:t], u.v\n",
    "match a:\n    case [b, *c] | {'d': e, **f} | G(h=i) as j if k:\n        pass\n",
]


class _Seen(cst.CSTVisitor):
    def __init__(self):
        self.nodes = []

    def on_visit(self, node):
        self.nodes.append(node)
        return True


@pytest.mark.parametrize("order", ["as_written", "reversed"])
def test_quick_walk_visits_what_libcst_visits_in_its_order(order):
    """QuickVisitor.walk reads children field by field, in the order libcst's own visit has; the
    order is learnt per node type (from the public ``children``), and again when a field seen
    without a child turns up with one (an f-string's format spec, a parenthesis), whichever kind
    of node comes first. The planner's walk reads a comprehension's element after its ``for``."""
    from tf_grl_migrate.migrator import traversal

    class Quick(traversal.QuickVisitor):
        def __init__(self):
            self.nodes = []

        def on_visit(self, node):
            self.nodes.append(node)
            return super().on_visit(node)

    class Hooked(traversal.QuickVisitor):  # no hook of its own sees layout: its walk leaves layout out
        def __init__(self):
            self.nodes = []

        def visit_Name(self, node):
            self.nodes.append(node)

        def visit_Attribute(self, node):
            self.nodes.append(node)

    class Commas(Hooked):  # a hook on a layout type: layout is walked
        def visit_Comma(self, node):
            self.nodes.append(node)

    sources = [*WALK_SOURCES, "a = ((b))\nc = (d)(e)\n", *(p.read_text(encoding="utf-8") for p in SOURCES)]
    traversal._FIELDS.clear()
    for source in sources if order == "as_written" else sources[::-1]:
        module = cst.parse_module(source)
        theirs, ours, planner, hooked, commas = _Seen(), Quick(), Collector(), Hooked(), Commas()
        module.visit(theirs)
        ours.walk(module)
        planner.walk(module)
        hooked.walk(module)
        commas.walk(module)
        assert ours.nodes == theirs.nodes
        assert hooked.nodes == [n for n in theirs.nodes if isinstance(n, (cst.Name, cst.Attribute))]
        assert commas.nodes == [n for n in theirs.nodes if isinstance(n, (cst.Name, cst.Attribute, cst.Comma))]
        assert (Quick._sees_layout, Hooked._sees_layout, Commas._sees_layout) == (True, False, True)
        # the planner records every node but layout, which holds nothing else
        recorded = [n for n in theirs.nodes if type(n) not in traversal.TRIVIA]
        assert set(map(id, planner.nodes)) == set(map(id, recorded))
        for node in theirs.nodes:
            for child in node.children:
                if type(node) in traversal.TRIVIA:
                    assert type(child) in traversal.TRIVIA
                else:
                    assert planner.parents.get(child) is (None if type(child) in traversal.TRIVIA else node)


@pytest.mark.parametrize("source", [*WALK_SOURCES, "def f(x):\n    [y async for y in x]\n    return lambda: (yield)\n",
                                    *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_a_visitor_read_from_the_walks_record_meets_what_its_walk_meets(source):
    """QuickVisitor.read replays the planner's record of a subtree for a visitor with only
    ``visit_`` hooks (a block's body scan): the same hooks on the same nodes in the same order, a
    subtree a hook declines skipped; a visitor with a ``leave_`` hook, or a subtree the record
    cannot replay (a comprehension read out of order), is walked."""
    from tf_grl_migrate.migrator.idioms.override_block import BodyScan
    from tf_grl_migrate.migrator.traversal import QuickVisitor

    class Leaves(QuickVisitor):
        def __init__(self):
            self.seen = []

        def visit_Name(self, node):
            self.seen.append(("visit", node))

        def leave_Call(self, node):
            self.seen.append(("leave", node))

    module = cst.parse_module(source)
    collector = Collector()
    collector.walk(module)
    fields = ("calls", "operators", "nested", "opaque")
    for node in [module, *collector.nodes]:
        walked, read = BodyScan(), BodyScan()
        walked.walk(node)
        read.read(node, collector.subtree(node))
        assert [getattr(read, f) for f in fields] == [getattr(walked, f) for f in fields]
        walked, read = Leaves(), Leaves()
        walked.walk(node)
        read.read(node, collector.subtree(node))
        assert read.seen == walked.seen


class _Edits(cst.CSTTransformer):
    """Edits a path-walking transformer can make: a name respelt, an import dropped from its line
    (``RemovalSentinel``), an ``if`` put in place of its body (``FlattenSentinel``), a ``pass``
    line dropped; every node the hooks see is recorded, with the updated node handed in."""

    def __init__(self, path=None):
        super().__init__()
        self.path, self.left = path, []

    def on_visit(self, node):
        return self.path is None or id(node) in self.path

    def on_leave(self, original, updated):
        if self.path is not None and id(original) not in self.path:
            return updated
        self.left.append((original, updated))
        return super().on_leave(original, updated)

    def leave_Name(self, original, updated):
        return updated.with_changes(value="renamed") if updated.value in ("b", "x", "tf") else updated

    def leave_Import(self, original, updated):
        return cst.RemoveFromParent()

    def leave_If(self, original, updated):
        return cst.FlattenSentinel(updated.body.body) if isinstance(updated.body, cst.IndentedBlock) else updated

    def leave_SimpleStatementLine(self, original, updated):
        if not updated.body or isinstance(updated.body[0], cst.Pass):
            return cst.RemoveFromParent()
        return updated


def _edited(module):
    """The nodes ``_Edits`` may change and every node above them, by id."""
    collector = Collector()
    collector.walk(module)
    path = set()
    for node in collector.nodes:
        if isinstance(node, (cst.Name, cst.Import, cst.If, cst.SimpleStatementLine)):
            while node is not None and id(node) not in path:
                path.add(id(node))
                node = collector.parents.get(node)
    return path


@pytest.mark.parametrize("source", [*WALK_SOURCES, "import a\nif b:\n    import c\n    x = 1\nelse:\n    pass\n",
                                    *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_a_transform_along_the_path_is_libcsts_visit(source):
    """traversal.transform, which walks only the path to the edits, makes the module libcst's own
    visit makes (a visit of every node, each hook handed a copy): the same code, the same tree,
    the same nodes left in the same order, each with what libcst hands its hook."""
    from tf_grl_migrate.migrator.traversal import transform

    module = cst.parse_module(source)
    theirs, ours = _Edits(), _Edits(_edited(module))
    want = module.visit(theirs)
    got = transform(module, ours, ours.path)
    assert got.code == want.code
    assert got.deep_equals(want)
    assert [o for o, _ in ours.left] == [o for o, _ in theirs.left if id(o) in ours.path]
    handed = {id(original): updated for original, updated in theirs.left}
    for original, updated in ours.left:  # each hook is handed what libcst hands it
        assert updated.deep_equals(handed[id(original)])


def test_a_transform_along_the_path_refuses_to_remove_what_libcst_refuses_to():
    """A node its parent cannot lose (an assignment's target) raises libcst's TypeError on both walks."""
    from tf_grl_migrate.migrator.traversal import transform

    class Removes(_Edits):
        def leave_Name(self, original, updated):
            return cst.RemoveFromParent()

    module = cst.parse_module("x = 1\n")
    ours = Removes(_edited(module))
    with pytest.raises(TypeError):
        module.visit(Removes())
    with pytest.raises(TypeError):
        transform(module, ours, ours.path)


def test_the_rewriter_walking_its_path_rewrites_as_libcsts_visit(monkeypatch):
    """Every case's rewrite, made by walking the path to the plan's edits, is the module libcst's
    visit of every node makes with the same plan."""
    from tf_grl_migrate.migrator import codemod
    from tf_grl_migrate.migrator.rewrite import Rewriter

    own, checked = Rewriter.rewrite, []

    def both(self, module):
        got = own(self, module)
        want = module.visit(Rewriter(self.plan))  # no path: every node visited, every hook asked
        assert got.code == want.code
        assert got.deep_equals(want)
        checked.append(module)
        return got

    monkeypatch.setattr(Rewriter, "rewrite", both)
    for path in sorted(CASES.glob("*/*/*.py")):
        for use_runtime in (False, True):
            try:
                codemod.migrate_code(path.read_text(encoding="utf-8"), use_runtime=use_runtime)
            except (codemod.SafetyError, cst.ParserSyntaxError):
                pass
    assert len(checked) > 100


def test_libcst_is_left_as_it_is():
    """After a migration, libcst's own visit is still libcst's (nothing of it is replaced), and
    the package imports from libcst only names its modules export, and reads no underscored
    attribute libcst defines (the walk and the positions take libcst's public road), but the two
    names of its metadata providers' protocol, with which the positions run PositionProvider, and
    the node's side of the codegen protocol its state serves (``_codegen``), through which they
    generate a statement's code up to one node."""
    import ast
    import inspect

    import libcst.codemod
    import libcst.helpers
    import libcst.metadata

    from tf_grl_migrate import migrate_source

    before = (cst.CSTNode.__dict__["visit"], cst.Module.__dict__["visit"])
    report = migrate_source((CASES / "rewrite" / "dann_builder_class" / "before.py").read_text(encoding="utf-8"))
    assert report.changed
    assert (cst.CSTNode.__dict__["visit"], cst.Module.__dict__["visit"]) == before
    assert inspect.getsourcefile(cst.CSTNode.visit).startswith(str(pathlib.Path(cst.__file__).parent))

    private = set()
    for module in (cst, libcst.metadata, libcst.helpers, libcst.codemod):
        for name in dir(module):
            for attribute in [*dir(getattr(module, name)), name]:
                if attribute.startswith("_") and not attribute.startswith("__"):
                    private.add(attribute)
    package = pathlib.Path(__file__).parent.parent / "tf_grl_migrate"
    trees = {path.name: ast.parse(path.read_text(encoding="utf-8")) for path in package.rglob("*.py")}
    ours = {n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    ours |= {n.attr for tree in trees.values() for n in ast.walk(tree)
             if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    private -= ours | {"_fields"}  # the package's own names; ast's node fields
    # a metadata provider's protocol: what it implements, and where it writes (traversal._positions);
    # the codegen protocol a provider's state serves, through which traversal._Locator stops at a node
    private -= {"_gen_impl", "_computed", "_codegen"}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "libcst":
                exported = getattr(__import__(node.module, fromlist=["__all__"]), "__all__", ())
                assert all(a.name in exported for a in node.names), (name, node.module)
            elif isinstance(node, ast.Import):
                assert all(not a.name.startswith("libcst.") for a in node.names), name
            elif isinstance(node, ast.Attribute):
                assert node.attr not in private, (name, node.lineno, node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in private, (name, node.lineno, node.value)


@pytest.mark.parametrize("arity", range(1, 9))
def test_generated_functions_take_one_distinct_parameter_per_op_input(arity):
    from tf_grl_migrate.migrator.nodes import input_names

    names = input_names(arity)
    assert len(names) == len(set(names)) == arity and all(n.isidentifier() for n in names)


def test_a_field_hook_set_on_a_visitor_class_later_is_called():
    """Hooks found once per class are found again when a hook is set on the class afterwards."""
    from tf_grl_migrate.migrator.traversal import QuickVisitor

    class Fields(QuickVisitor):
        pass

    seen = []
    module = cst.parse_module("f(a, b)\n")
    Fields().walk(module)
    Fields.visit_Call_args = lambda self, node: seen.append(len(node.args))
    Fields().walk(module)
    assert seen == [2]


SPLICE_SOURCES = [
    # no line break at the end; a header and a footer of comments; CRLF; a removed first import
    "import tensorflow as tf\n\n@tf.RegisterGradient('R')\ndef _r(op, grad):\n    return -grad\n\n"
    "def f(x):\n    with tf.get_default_graph().gradient_override_map({'Identity': 'R'}):\n"
    "        return tf.identity(x)",
    "#!/usr/bin/env python\n# header\n\nimport tensorflow as tf\n\n\n@tf.RegisterGradient('R')\r\n"
    "def _r(op, grad):\r\n    return -grad\r\n\r\nx = 1; y = (2,\r\n  3)\r\n\r\n"
    "def f(x):\r\n    with tf.get_default_graph().gradient_override_map({'Identity': 'R'}):\r\n"
    "        return tf.identity(x)\r\n# footer\r\n\r\n",
    "from tensorflow.python.framework import ops\nimport tensorflow as tf\n\n\n"
    "@ops.RegisterGradient('R')\ndef _r(op, grad):\n    return -grad\n\n\n"
    "def f(x):\n    g = tf.get_default_graph()\n    with g.gradient_override_map({'Identity': 'R'}):\n"
    "        y = tf.identity(x)\n    return y\n",
]


# statements kept inside changed ones: a whole method, a multi-line string, a block's footer comment
# at an odd indent, a class indented by two, tabs, and a kept statement a dissolved block moves out
NESTED_SOURCE = (
    '# Licence header: kept as it was.\n'
    'import tensorflow as tf\n'
    '\n'
    '\n'
    "@tf.RegisterGradient('R')\n"
    'def _r(op, grad):\n'
    '    return -grad\n'
    '\n'
    '\n'
    'class Model(object):\n'
    '    def build(self, x):\n'
    '        if x is None:\n'
    '            # nothing to build\n'
    '            y = tf.constant([1.0, 2.0, 3.0]) * 2 + tf.ones([3])\n'
    '        elif isinstance(x, list):\n'
    '            y = tf.concat([tf.reshape(v, [-1]) for v in x], axis=0)  # flatten\n'
    '        else:\n'
    '            y = tf.reshape(x, [-1]) \\\n'
    '                + tf.zeros_like(tf.reshape(x, [-1]))\n'
    "            # a block's footer comment\n"
    '\n'
    '        try:\n'
    '            z = tf.identity(y, name="z") + tf.constant(0.0) * tf.reduce_sum(y)\n'
    '        except (ValueError, TypeError) as exc:\n'
    '            raise RuntimeError("could not build: %s" % (exc,)) from exc\n'
    '        else:\n'
    '            z = z + tf.zeros_like(z) * tf.reduce_mean(z)\n'
    '        finally:\n'
    '            pass\n'
    '        return z\n'
    '\n'
    '    def flip(self, x):\n'
    '        g = tf.get_default_graph()\n'
    "        with g.gradient_override_map({'Identity': 'R'}):\n"
    '            y = tf.identity(x)\n'
    '        doc = """a string\n'
    'that spans lines: {}\n'
    '""".format(tf.reduce_sum(tf.square(x)) + tf.reduce_mean(tf.abs(x)))\n'
    '        return y, doc\n'
    '      # a comment at an odd indent\n'
    '\n'
    '\n'
    'class Narrow:\n'
    '  def f(self, x):\n'
    '    g = tf.get_default_graph()\n'
    "    with g.gradient_override_map({'Identity': 'R'}):\n"
    '      y = tf.identity(x)\n'
    '    z = tf.reduce_sum(tf.square(y)) + tf.reduce_mean(tf.abs(y)) * 2.0\n'
    '    return y, z\n'
    '\n'
    '\n'
    'def f_tab(x):\n'
    '\tg = tf.get_default_graph()\n'
    "\twith g.gradient_override_map({'Identity': 'R'}):\n"
    '\t\ty = tf.identity(x)\n'
    '\tz = tf.reduce_sum(tf.square(y)) + tf.reduce_mean(tf.abs(y)) * 2.0\n'
    '\treturn y, z\n'
    '\n'
    '\n'
    'def g2(x, sizes):\n'
    '    g = tf.get_default_graph()\n'
    "    with g.gradient_override_map({'Identity': 'R'}):\n"
    '        y = tf.identity(x)\n'
    '        width = [2, (3, 4), {"a": [1, 2, 3]}, sizes[0] + sizes[1] * sizes[2] - sizes[3]]\n'
    '    return y, width\n'
    "# the module's footer\n"
)
# generated statements written from their template's code (nodes.template_tokens): at depths
# 1 and 2, a `name=` spanning lines inside the template, and the same template in other layouts
TEMPLATE_SOURCE = (
    "import tensorflow as tf\n"
    "\n"
    "\n"
    "def binarize(x):\n"
    "    with tf.get_default_graph().gradient_override_map({'Sign': 'Identity'}):\n"
    "        return tf.sign(x)\n"
    "\n"
    "\n"
    "class Net:\n"
    "    def call(self, x):\n"
    "        # a comment the dissolved block hands on\n"
    "        with tf.get_default_graph().gradient_override_map({'Sign': 'Identity'}):\n"
    "            y = tf.sign(x, name=('s'\n"
    "                                 'ign'))\n"
    "        with tf.get_default_graph().gradient_override_map({'Round': 'Identity'}):\n"
    "            z = tf.round(y)\n"
    "        return z\n"
)
SPLICE_SOURCES += [NESTED_SOURCE, NESTED_SOURCE.replace("\n", "\r\n"), TEMPLATE_SOURCE,
                   TEMPLATE_SOURCE.replace("    ", "\t").replace("\n", "\r\n"), TEMPLATE_SOURCE.replace("    ", "  ")]


@pytest.mark.parametrize("source", [*SPLICE_SOURCES, *(
    p.read_text(encoding="utf-8") for p in sorted((CASES / "rewrite").glob("*/before.py")))])
def test_the_rewritten_module_is_written_as_libcst_writes_it(source, monkeypatch):
    """rewrite.written copies each statement the rewrite kept from the source, writes each
    generated from a template from that template's code, and generates the rest: the code is
    libcst's own ``new.code``, byte for byte."""
    from tf_grl_migrate.migrator import codemod, rewrite

    calls = []

    def checked(original, new, text, breaks_before):
        got = rewrite.written(original, new, text, breaks_before)
        assert got == new.code
        calls.append(got)
        return got

    monkeypatch.setattr(codemod, "written", checked)
    codemod.migrate_code(source)
    assert calls


def test_a_module_with_a_header_and_a_footer_is_spliced_not_generated_whole(monkeypatch):
    """libcst's walk hands back a new header (and footer) sequence even where it kept every line:
    rewrite.written compares them node for node, so a licence comment at the top does not make it
    generate the whole module again."""
    import libcst

    from tf_grl_migrate.migrator import codemod, rewrite

    whole = []
    generated = libcst.Module.code

    def code(module):
        whole.append(module)
        return generated.fget(module)

    monkeypatch.setattr(libcst.Module, "code", property(code))
    source = next(s for s in SPLICE_SOURCES if s.startswith("#!"))
    assert "# footer" in source
    calls = []
    monkeypatch.setattr(codemod, "written", lambda *args: calls.append(rewrite.written(*args)) or calls[-1])
    codemod.migrate_code(source)
    assert calls and not whole


def test_statements_kept_inside_a_changed_one_are_copied_where_their_indent_is_kept(monkeypatch):
    """rewrite._Kept: inside a changed top-level statement, a kept statement of some size is
    copied from the source where it is written at its own indent (the unchanged method, the
    string, the two-space and tab-indented ones), and so is any kept one in the block of a def
    whose header stands (`return y, width`); the one a dissolved block moves out is generated.
    The module is libcst's own code (test above)."""
    from tf_grl_migrate.migrator import codemod, rewrite
    from tf_grl_migrate.migrator.nodes import code_of

    held = []
    text = rewrite._Kept._text
    monkeypatch.setattr(rewrite._Kept, "_text", lambda self, statement: held.append(code_of(statement))
                        or text(self, statement))
    result = codemod.migrate_code(NESTED_SOURCE)
    assert result.code != NESTED_SOURCE
    assert any(h.lstrip().startswith("def build") for h in held)
    assert any('"""a string' in h for h in held)
    assert sum(h.startswith("z = ") for h in held) == 2  # in the class indented by two, and the tabbed one
    assert any(h.strip() == "return y, width" for h in held)
    assert not any(h.lstrip().startswith("width") for h in held)


def test_a_stand_in_found_where_it_was_not_put_has_its_statement_generated_whole(monkeypatch):
    """rewrite._Kept: were a held statement's stand-in written anywhere but alone on a line at its
    indent, the statement holding it (at the top level, or in the block of a def whose header
    stands) is generated whole, at its own indent: the same module."""
    from tf_grl_migrate.migrator import codemod, rewrite

    want = codemod.migrate_code(NESTED_SOURCE).code
    held = rewrite._Kept._held

    def misplaced(self, module, statement, indent, found):
        stand_in = held(self, module, statement, indent, found)
        if isinstance(stand_in, cst.SimpleStatementLine) and stand_in is not statement:
            return stand_in.with_changes(body=[cst.Expr(cst.Name("a")), *stand_in.body])  # `a; <stand-in>`
        return stand_in

    monkeypatch.setattr(rewrite._Kept, "_held", misplaced)
    assert codemod.migrate_code(NESTED_SOURCE).code == want


@pytest.mark.parametrize("layout", [{}, {"    ": "\t", "\n": "\r\n"}, {"    ": "  "}])
def test_generated_statements_made_from_a_template_are_written_from_its_code(layout, monkeypatch):
    """rewrite._Kept: a generated straight-through function (nodes.parsed_statement's node, as
    made) stands in for its template's code, at each depth it is written at and in each layout;
    one given the comment lines of the block it replaces is generated. The module is libcst's
    own code (test above)."""
    from tf_grl_migrate.migrator import codemod, rewrite

    source = TEMPLATE_SOURCE
    for old, new in layout.items():
        source = source.replace(old, new)
    indent = layout.get("    ", "    ")
    written = []
    template = rewrite._Kept._template

    def seen(module, statement, at):
        code = template(module, statement, at)
        if code is not None:
            written.append(at)
        return code

    monkeypatch.setattr(rewrite._Kept, "_template", staticmethod(seen))
    codemod.migrate_code(source)
    assert written == [indent, indent * 2]  # binarize's, and Round's in the method; not Sign's there


@pytest.mark.parametrize("source", [*SCOPE_SOURCES, *(p.read_text(encoding="utf-8") for p in SOURCES)])
def test_nodes_of_a_type_are_the_walks_nodes_of_it_in_its_order(source):
    """RuleFacts.of_type: the index by type gives what a filter of the walk's nodes gives."""
    from tf_grl_migrate.migrator.analysis import Planner

    facts = Planner(cst.parse_module(source)).facts
    for kinds in [(cst.Name,), (cst.ClassDef,), (cst.Attribute, cst.Name), (cst.Call, cst.With, cst.Name)]:
        assert facts.of_type(*kinds) == [n for n in facts.nodes if isinstance(n, kinds)]
    with pytest.raises(AssertionError):
        facts.of_type(cst.BaseExpression)  # a base: its instances are not of its type


def test_a_dotted_names_code_is_libcsts():
    """nodes.code_of writes a bare or dotted name itself; for every name and attribute of the
    cases (and ones with parentheses, spaces, comments and line breaks), libcst's own code."""
    from tf_grl_migrate.migrator import nodes

    sources = [p.read_text(encoding="utf-8") for p in sorted(CASES.glob("*/*/before.py"))]
    sources.append("x = (a).b\ny = a . b\nz = (a.b)\nw = a.\\\n    b\nv = (a  # c\n     .b)\n")
    seen = set()
    for source in sources:
        for node in _names_and_attributes(source):
            expected = cst.Module(body=[]).code_for_node(node)
            assert nodes.code_of(node) == expected
            seen.add(nodes._dotted_code(node) is None)
    assert seen == {True, False}  # both roads taken


def _names_and_attributes(source):
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, node):
            found.append(node)

        def visit_Attribute(self, node):
            found.append(node)

    cst.parse_module(source).visit(Visitor())
    return found


@pytest.mark.parametrize("literal", ["'a'", '"Sign"', "''", '"it\'s"', "'a\\nb'", "r'a\\b'", "u'x'", "b'x'", "rb'x'",
                                     '"""t"""', "'''a'b'''", '"a" "b"', 'f"x"', "'é'", "x"])
def test_string_value_is_the_literals_value(literal):
    """nodes.string_value reads a plain literal from its text and evaluates the rest: the value
    Python gives a str literal, None for bytes, an f-string or no literal."""
    import ast

    from tf_grl_migrate.migrator.nodes import string_value

    try:
        want = ast.literal_eval(literal)
    except (ValueError, SyntaxError, TypeError):
        want = None
    assert string_value(cst.parse_expression(literal)) == (want if isinstance(want, str) else None)


def test_templates_are_kept_for_the_last_texts_and_only_their_nodes_are_written_from_tokens(monkeypatch):
    """nodes.parsed_statement keeps the last texts' statements; one pushed out is parsed again,
    and its old node (still held by a caller) is no template any more: generated in place."""
    from tf_grl_migrate.migrator import nodes

    monkeypatch.setattr(nodes, "_TEMPLATES_KEPT", 3)
    monkeypatch.setattr(nodes, "_TEMPLATES", nodes.OrderedDict())
    monkeypatch.setattr(nodes, "_TEMPLATE_IDS", {})
    first = nodes.parsed_statement("a_first_text = 1\n")
    assert nodes.parsed_statement("a_first_text = 1\n") is first
    tokens = nodes.template_tokens(first, "\t", "\r\n")
    assert "".join("\t\t" if t is nodes.INDENT else t for t in tokens) == "\t\ta_first_text = 1\r\n"
    for i in range(3):
        nodes.parsed_statement(f"pushing_out_{i} = {i}\n")
    assert nodes.template_tokens(first, "    ", "\n") is None
    assert nodes.parsed_statement("a_first_text = 1\n") is not first
    assert len(nodes._TEMPLATES) <= 3 and len(nodes._TEMPLATE_IDS) == len(nodes._TEMPLATES)
    assert nodes.template_tokens(cst.parse_statement("x = 1\n"), "    ", "\n") is None  # not made by it
