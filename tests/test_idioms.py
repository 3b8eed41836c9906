"""Every idiom's examples, generated from the idiom modules (tf_grl_migrate/migrator/idioms), and the code
table's ownership: each 1xx/2xx code belongs to one idiom, which holds an example of it."""

import pathlib

import pytest

from tf_grl_migrate.codes import CODES
from tf_grl_migrate.migrator.codemod import migrate_code
from tf_grl_migrate.migrator.idioms import all_idioms

IDIOMS = all_idioms()
EXAMPLES = [(idiom.name, code, text) for idiom in IDIOMS for code, text in idiom.examples.items()]
CASES = pathlib.Path(__file__).parent / "cases" / "rewrite"
FILE_LAYER = {"GRL112"}  # a notebook cell that is not Python: the notebook reader's, not an idiom's


@pytest.mark.parametrize(("idiom", "code", "text"), EXAMPLES, ids=[f"{i}-{c}" for i, c, _ in EXAMPLES])
def test_each_example_gives_its_code(idiom, code, text):
    result = migrate_code(text)
    assert code in [d.code for d in result.diagnostics]
    if code.startswith("GRL1"):
        assert result.code == text  # a refused site is left as it is
    assert migrate_code(result.code).code == result.code


VALID = [(idiom, text) for idiom in IDIOMS for text in idiom.valid]


@pytest.mark.parametrize(("idiom", "text"), VALID, ids=[f"{i.name}-valid{n}" for n, (i, _) in enumerate(VALID)])
def test_each_valid_example_migrates(idiom, text):
    """Beside the codes' examples (what the idiom refuses or notes), code it must migrate: changed,
    nothing refused, and a second run changes nothing (a runtime idiom's under --use-runtime)."""
    result = migrate_code(text, use_runtime=idiom.runtime)
    assert result.code != text, idiom.name
    assert not [d.code for d in result.diagnostics if d.is_refusal], (idiom.name, result.diagnostics)
    assert migrate_code(result.code, use_runtime=idiom.runtime).code == result.code


def test_every_idiom_has_a_valid_example():
    assert [i.name for i in IDIOMS if not i.valid] == []


def test_every_code_of_the_table_has_one_owner_with_an_example():
    owners = {}
    for idiom in IDIOMS:
        assert set(idiom.codes) <= set(CODES), idiom.name
        assert set(idiom.examples) == set(idiom.codes), f"{idiom.name}: an example per code, and no other"
        for code in idiom.codes:
            owners.setdefault(code, []).append(idiom.name)
    assert {c: o for c, o in owners.items() if len(o) > 1} == {}
    unowned = {c for c in CODES if c[:4] in ("GRL1", "GRL2")} - set(owners) - FILE_LAYER
    assert unowned == set()


@pytest.mark.parametrize("idiom", IDIOMS, ids=[i.name for i in IDIOMS])
def test_each_idiom_names_cases_that_prove_it(idiom):
    """The migrations an idiom names are rewrite cases (tests/test_differential.py runs each
    against TF1); a --use-runtime idiom's cases hold that strategy's output (after_runtime.py; for
    a block the inline rewrite refuses, under tests/cases/refuse, with a case.json to run it)."""
    for name in idiom.cases:
        refused_inline = CASES.parent / "refuse" / name  # runtime_map: migrated with --use-runtime only
        if idiom.runtime and (refused_inline / "after_runtime.py").is_file():
            assert (refused_inline / "case.json").is_file(), name
            continue
        assert (CASES / name / "after.py").is_file(), name
        if idiom.runtime:
            assert (CASES / name / "after_runtime.py").is_file(), name


def test_rules_are_declared_run_in_order_and_named_nowhere_else():
    """Each hook's rules are those its idioms declare with @rule, run in idioms.ORDER; the planner
    and the rewrite run them, and name no idiom's check, emit or rule."""
    import ast
    import pathlib

    from tf_grl_migrate.migrator import idioms
    from tf_grl_migrate.migrator.idioms.contract import HOOKS, REGISTRY

    for hook in HOOKS:
        found = idioms.rules(hook)
        assert found, hook
        assert [f.__module__.rsplit(".", 1)[1] for f in found] == list(idioms.ORDER[hook])
        assert all(REGISTRY[hook][f.__module__.rsplit(".", 1)[1]] is f for f in found)
    assert [r.name for r in idioms.runtime_rules()] == list(idioms.ORDER["take"])
    rule_names = set(HOOKS) | {"check", "emit", "check_uses", "make_maker", "use_elsewhere"}
    package = pathlib.Path(idioms.__file__).parent.parent
    for name in ("analysis.py", "rewrite.py", "codemod.py"):
        tree = ast.parse((package / name).read_text(encoding="utf-8"))
        named = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                 and isinstance(n.value, ast.Name) and n.value.id in idioms.MODULES}
        assert not named & rule_names, (name, named & rule_names)
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "idioms"
                    for a in n.names}
        assert not imported & set(idioms.MODULES), (name, imported)  # no idiom module at all


def test_converting_rules_return_edits_and_never_write_the_plan():
    """The builder applies what a converting rule returns (plan.Plan.apply): the builder the rules
    see offers no plan to write, and no idiom module reaches one through it."""
    import ast

    from tf_grl_migrate.migrator import idioms
    from tf_grl_migrate.migrator.idioms.contract import Converting

    assert not hasattr(Converting, "plan")
    package = pathlib.Path(idioms.__file__).parent
    for module in idioms.MODULES:
        tree = ast.parse((package / f"{module}.py").read_text(encoding="utf-8"))
        reached = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "plan"
                   and isinstance(n.value, ast.Name) and n.value.id == "builder"]
        assert not reached, (module, reached)


def test_a_rule_for_no_hook_or_with_other_parameters_fails_at_import():
    """A misspelt hook, or a rule whose parameters are not its hook's, is an error when the idiom
    is imported, never a rule dropped silently."""
    from tf_grl_migrate.migrator.idioms.contract import rule

    with pytest.raises(TypeError, match="no such hook"):
        rule("convert_calls")
    with pytest.raises(TypeError, match=r"takes \(builder, site, call, op, target\)"):
        @rule("convert_call")
        def convert_call(builder, site, call):
            return None


def test_an_undeclared_rule_or_one_out_of_order_fails_when_the_rules_are_asked_for(monkeypatch):
    """A function named for a hook but not declared, and a declared rule ORDER does not run, stop
    the run at the first ``rules()`` instead of being skipped."""
    from tf_grl_migrate.migrator import idioms
    from tf_grl_migrate.migrator.idioms import straight_through

    def finish(facts):
        return []

    finish.__module__ = straight_through.__name__  # as if written in that module
    monkeypatch.setattr(straight_through, "finish", finish, raising=False)
    idioms._registry.cache_clear()
    with pytest.raises(TypeError, match="defines finish without @rule"):
        idioms.rules("finish")
    monkeypatch.undo()
    monkeypatch.setitem(idioms.ORDER, "finish", ("override_block",))
    idioms._registry.cache_clear()
    with pytest.raises(TypeError, match="finish rules are declared by"):
        idioms.rules("finish")
    monkeypatch.undo()
    idioms._registry.cache_clear()
    assert idioms.rules("finish")


def test_no_idiom_writes_a_record_it_is_handed():
    """Rules return what they decide (#40): no function of an idiom assigns or mutates a field of a
    record it is handed (a parameter typed Registration, Site, DefunSite or Dispatch); the planner
    writes verdicts and settled shapes, and a gathering rule fills only the records it makes."""
    import ast

    from tf_grl_migrate.migrator import idioms

    records = {"Registration", "Site", "DefunSite", "Dispatch"}
    mutators = {"append", "extend", "add", "update", "setdefault", "pop", "remove", "clear", "discard", "insert"}
    package = pathlib.Path(idioms.__file__).parent
    written = []
    for module in idioms.MODULES:
        tree = ast.parse((package / f"{module}.py").read_text(encoding="utf-8"))
        for fdef in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            handed = {a.arg for a in [*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs]
                      if a.annotation is not None and records & {n.id for n in ast.walk(a.annotation)
                                                                 if isinstance(n, ast.Name)}}
            for node in ast.walk(fdef):
                field = None
                if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    field = node.value if isinstance(node, ast.Subscript) else node
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr in mutators):
                    field = node.func.value
                root = field.value if isinstance(field, ast.Attribute) else field
                if isinstance(root, ast.Name) and root.id in handed and root is not node:
                    written.append(f"{module}.py:{node.lineno} {ast.unparse(node)[:60]}")
    assert not written, written
