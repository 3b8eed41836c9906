"""The safety net (tf_grl_migrate/safety.py) catches a wrong rewrite even where the analysis
that planned it has a gap: each test switches a piece of the analysis off, or breaks the
rewriter, and checks that the file is refused with GRL904 and left byte for byte as it was."""

import ast

import libcst as cst
import pytest
from harness import cli

from tf_grl_migrate.migrator import rewrite, safety
from tf_grl_migrate.migrator.codemod import SafetyError, migrate_code
from tf_grl_migrate.migrator.idioms import override_block

CONTEXT_MANAGER = '''import contextlib

import tensorflow as tf


@tf.RegisterGradient("GuidedReluNet")
def _guided(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0, grad.dtype)


@contextlib.contextmanager
def guided_relu():
    g = tf.get_default_graph()
    with g.gradient_override_map({"Relu": "GuidedReluNet"}):
        {body}
'''
HAZARDS = {
    "yield": "yield",
    "yield-from": "yield from other()",
    "await": "await other()",
    "import": "import mymodel",
    "star-import": "from mymodel import *",
    "context-object": "with scope:\n            pass",
}


@pytest.mark.parametrize("body", HAZARDS.values(), ids=HAZARDS.keys())
def test_dissolved_block_that_hands_control_away_is_caught_without_the_block_scan(body, monkeypatch):
    """The analysis refuses these (GRL101); with that rule switched off the net still does."""
    source = CONTEXT_MANAGER.replace("{body}", body)
    if body.startswith("await"):
        source = source.replace("def guided_relu", "async def guided_relu")
    assert [d.code for d in migrate_code(source).diagnostics] == ["GRL101"]
    monkeypatch.setattr(override_block.BodyScan, "__init__", _blind_scan_init)
    monkeypatch.setattr(override_block.BodyScan, "on_visit", lambda self, node: True)
    with pytest.raises(SafetyError, match="would remove an override around"):
        migrate_code(source)


def _blind_scan_init(self):
    self.calls, self.operators, self.nested, self.opaque = [], [], [], []


def test_yield_case_is_refused_through_the_cli_with_grl904_and_not_written(tmp_path, monkeypatch):
    path = tmp_path / "guided.py"
    path.write_text(CONTEXT_MANAGER.replace("{body}", "yield"))
    before = path.read_bytes()
    monkeypatch.setattr(override_block.BodyScan, "visit_Yield", lambda self, node: None)
    result = cli(path, "--write", "--no-cache")
    assert result.exit_code == 123, result.output
    assert f"{path}:1:1: GRL904 the rewrite would remove an override around `yield`" in result.output
    assert path.read_bytes() == before
    assert "0 files migrated" in result.output


DANN = '''import tensorflow as tf


def flip_gradient(x, l=1.0):
    grad_name = "FlipNet%d" % id(x)

    @tf.RegisterGradient(grad_name)
    def _flip(op, grad):
        return [tf.negative(grad) * l]

    print("building", grad_name)
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": grad_name}):
        y = tf.identity(x)
    return y
'''


def test_rewriter_that_drops_a_statement_the_plan_never_removed_is_caught(monkeypatch):
    assert "print(" in migrate_code(DANN).code
    leave = rewrite.Rewriter.leave_IndentedBlock  # the block holding the print is on the path to an edit

    def drops_prints(self, original, updated):
        body = [s for s in updated.body if "print(" not in cst.Module(body=[]).code_for_node(s)]
        return leave(self, original, updated.with_changes(body=body))

    monkeypatch.setattr(rewrite.Rewriter, "leave_IndentedBlock", drops_prints)
    with pytest.raises(SafetyError, match="would remove a `Expr` statement that is not override machinery"):
        migrate_code(DANN)


def test_plan_that_removes_a_live_assignment_is_caught(monkeypatch):
    """A dead-code pass that removed `l = ...` although the gradient still reads it."""
    source = DANN.replace('    print("building", grad_name)\n', "    l = l * 2.0\n")
    remove = rewrite.Builder.remove_dead_code

    def overzealous(self):
        remove(self)
        for stmt in _statements(self.p.module):
            if cst.Module(body=[]).code_for_node(stmt).strip() == "l = l * 2.0":
                self.plan.removed_stmts.add(stmt)

    monkeypatch.setattr(rewrite.Builder, "remove_dead_code", overzealous)
    with pytest.raises(SafetyError, match="remove the assignment of `l`, which the rewritten code still reads"):
        migrate_code(source)


@pytest.mark.parametrize("read", ["g", "\uff47"])  # `ｇ`: Python reads it as `g`
def test_a_removed_assignment_read_in_any_spelling_is_caught(read):
    """The net looks for reads of a removed name in the output's tree, however the name is
    written (only in ASCII code does it skip a name whose text is nowhere in the output)."""
    original = "def f(x):\n    g = 1\n    return x + g\n"
    removed = [("g = 1\n", ("f",), ())]
    with pytest.raises(SafetyError, match="remove the assignment of `g`"):
        safety.check(original, f"def f(x):\n    return x + {read}\n", removed, [])
    safety.check(original.replace("x + g", "x + gg"), "def f(x):\n    return x + gg\n", removed, [])


def _statements(module):
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node):
            found.append(node)

    module.visit(Visitor())
    return found


def test_declared_machinery_may_go_and_nothing_else():
    original = "import a\nx = 1\ny = 2\nwith g.gradient_override_map({}):\n    z = f(x)\n"
    removed = [("y = 2\n", (), ())]
    safety.check(original, "import a\nx = 1\nz = h(x)\n", removed=removed, dissolved=["z = f(x)\n"])
    with pytest.raises(SafetyError, match="`Import` statement"):
        safety.check(original, "x = 1\nz = h(x)\n", removed=removed, dissolved=["z = f(x)\n"])
    with pytest.raises(SafetyError, match="still reads"):
        safety.check(original, "import a\nx = 1\nz = h(y)\n", removed=removed, dissolved=["z = f(x)\n"])
    with pytest.raises(SafetyError, match="does not parse"):
        safety.check(original, "x = (\n", removed=[], dissolved=[])


def test_each_removed_assignment_is_checked_in_its_own_function():
    """The net finds each function by its path once per check (safety._Scopes) and asks every
    removed statement of it: the second of two, read again in a nested function, is caught; a
    name read only in another function is not."""
    original = ("class B:\n    def f(self):\n        a = 1\n        b = 2\n"
                "        def g():\n            return 0\n        return g\n"
                "    def h(self):\n        return b\n")
    removed = [("a = 1\n", ("B", "f"), ()), ("b = 2\n", ("B", "f"), ())]
    kept = ("class B:\n    def f(self):\n        def g():\n            return {}\n        return g\n"
            "    def h(self):\n        return b\n")
    safety.check(original, kept.format("0"), removed=removed, dissolved=[])
    with pytest.raises(SafetyError, match="assignment of `b`, which the rewritten code still reads \\(line 4\\)"):
        safety.check(original, kept.format("b"), removed=removed, dissolved=[])

def test_unchanged_statements_are_paired_one_to_one_and_a_lost_twin_is_still_caught():
    """The net walks only the module-level statements whose text changed: a statement kept as it
    was pairs with its twin in the output, once. Losing one of two identical statements, or one
    whose text moved into another statement, is still a missing statement."""
    original = "import a\nx = f()\nx = f()\n\n\n@deco\ndef g():\n    return a.b\n"
    safety.check(original, original, removed=[], dissolved=[])
    with pytest.raises(safety.SafetyError, match="`Assign`"):
        safety.check(original, "import a\nx = f()\n\n\n@deco\ndef g():\n    return a.b\n", removed=[], dissolved=[])
    with pytest.raises(safety.SafetyError, match="`Return`"):
        safety.check(original, "import a\nx = f()\nx = f()\n\n\n@deco\ndef g():\n    pass\n", removed=[], dissolved=[])
    with pytest.raises(safety.SafetyError, match="`Expr`"):  # a decorated def whose decorator went
        safety.check("@deco\ndef g():\n    pass\nh()\n", "def g():\n    pass\n", removed=[], dissolved=[])


def test_the_statements_counted_are_those_ast_walk_finds():
    """The net counts statements without walking expressions (statements are only in bodies and
    in except/case clauses): the very statements ``ast.walk`` meets, in every case file and in
    a module with every kind of body."""
    import ast
    import pathlib

    every_body = ("async def f():\n    async with a:\n        pass\n    async for b in c:\n        pass\n"
                  "class C:\n    @d\n    def m(self):\n        while e:\n            break\n        else:\n"
                  "            pass\n"
                  "try:\n    pass\nexcept E:\n    pass\nelse:\n    pass\nfinally:\n    pass\n"
                  "try:\n    pass\nexcept* E:\n    pass\n"
                  "match x:\n    case 1:\n        if y:\n            pass\n        elif z:\n            pass\n"
                  "with g:\n    for i in j:\n        lambda: (yield)\n")
    cases = pathlib.Path(__file__).parent / "cases"
    for source in [every_body, *(p.read_text(encoding="utf-8") for p in sorted(cases.rglob("*.py")))]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for top in tree.body:
            walked = [n for n in ast.walk(top) if isinstance(n, ast.stmt)]
            assert sorted(map(id, safety._statements(top))) == sorted(map(id, walked))


def test_a_span_the_original_does_not_hold_is_parsed_from_its_code():
    """A Span is looked up in the original's tree; where no statements there start and end as it
    says (a comment line after a block ends its text below ast's end), its own code is parsed."""
    original = "if x:\n    a = 1; b = 2\n    c = 3\n    # trailing\nd = 4\n"
    known = safety._Original(original, None)
    both = known.statements(safety.Span(2, 4, 2, 2, lambda: pytest.fail("the tree holds a; b")))
    assert [type(s).__name__ for s in both] == ["Assign", "Assign"] and both[0].lineno == 2
    parsed = []
    block = known.statements(safety.Span(1, 0, 4, 1, lambda: parsed.append(1) or original[:-6]))
    assert parsed and len(block) == 1 and len(block[0].body) == 3
    assert known.statements("e = 5\n")[0].lineno == 1


def test_a_statement_removed_beside_untouched_methods_is_caught():
    """Statements the rewrite left as they were are paired level by level (a method it did not
    touch, in the class it changed) and not compared again; one removed from a changed method is
    still missed, even where the same line stays in another method."""
    original = ("class A:\n    def f(self):\n        x = 1\n        return x\n\n"
                "    def g(self):\n        x = 1\n        return x\n")
    changed = "class A:\n    def f(self):\n        return x\n\n    def g(self):\n        x = 1\n        return x\n"
    with pytest.raises(SafetyError, match="would remove a `Assign` statement"):
        safety.check(original, changed, removed=[], dissolved=[])
    kept_old, kept_new = safety._unchanged(original, ast.parse(original), changed, ast.parse(changed))
    assert len(kept_old) == len(kept_new) == 1  # g: a method the rewrite did not touch
    safety.check(original, changed, removed=[("x = 1\n", ("A", "f"), ("x",))], dissolved=[])  # declared: it may go
