"""Registrations in one module, overrides in another: both ends migrate together, or both stay
with a diagnostic; the result does not depend on -j; a registration no linked module uses is noted."""

import pathlib
import re
import textwrap

from harness import cli

GRADS = '''\
import tensorflow as tf

REVERSE_NAME = "ReverseCross"


@tf.RegisterGradient(REVERSE_NAME)
def _reverse(op, grad):
    return -grad


@tf.RegisterGradient("ReadsAttr")
def _reads_attr(op, grad):
    return grad * op.get_attr("T")
'''

USES = '''\
import tensorflow as tf

import grads


def reversed_features(x):
    with tf.get_default_graph().gradient_override_map({"Identity": grads.REVERSE_NAME}):
        return tf.identity(x)


def attr_user(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "ReadsAttr"}):
        return tf.identity(x)
'''

OPAQUE_USE = '''\
import tensorflow as tf

from grads import REVERSE_NAME


def opaque(x, encoder):
    with tf.get_default_graph().gradient_override_map({"Identity": REVERSE_NAME}):
        return encoder(x)
'''

NO_IMPORT = '''\
import tensorflow as tf


def reversed_elsewhere(x):
    with tf.get_default_graph().gradient_override_map({"Identity": "ReverseCross"}):
        return tf.identity(x)
'''


def _tree(tmp_path, **files) -> pathlib.Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return tmp_path


def _diagnostics(output: str) -> set[tuple[str, str]]:
    """{("file.py:line", code)} of the diagnostics in a CLI output."""
    return {(f"{m[1]}:{m[2]}", m[3]) for m in re.finditer(r"([\w.]+\.py):(\d+):\d+: (GRL\d+)", output)}


def test_linked_ends_migrate_and_unconvertible_registration_blocks_its_use(tmp_path):
    tree = _tree(tmp_path, grads=GRADS, uses=USES)
    result = cli(tree, "--write", "-j", "1")
    grads, uses = (tree / "grads.py").read_text(), (tree / "uses.py").read_text()
    assert "grads._reverse(tf.identity)(x)" in uses
    assert "def _reverse(forward, name=None):" in grads
    # op.get_attr cannot be supplied by tf.custom_gradient: the registration stays, and so does its use
    assert '@tf.RegisterGradient("ReadsAttr")' in grads
    assert '{"Identity": "ReadsAttr"}' in uses
    assert ("uses.py:12", "GRL110") in _diagnostics(result.output)
    assert "ReadsAttr" in result.output and "op.get_attr" in result.output


def test_refused_use_keeps_the_registration_in_the_other_module(tmp_path):
    tree = _tree(tmp_path, grads=GRADS, uses=USES, opaque=OPAQUE_USE)
    before = (tree / "grads.py").read_text()
    result = cli(tree, "--write", "-j", "1")
    found = _diagnostics(result.output)
    assert ("opaque.py:7", "GRL101") in found
    # the other user of the same registration cannot migrate alone: TF1's registration must stay for opaque.py
    assert ("uses.py:7", "GRL110") in found
    assert (tree / "grads.py").read_text() == before
    assert "gradient_override_map" in (tree / "uses.py").read_text()


def test_use_in_a_module_that_does_not_import_the_registration(tmp_path):
    tree = _tree(tmp_path, grads=GRADS, elsewhere=NO_IMPORT)
    result = cli(tree, "-j", "1")
    assert ("elsewhere.py:5", "GRL102") in _diagnostics(result.output)
    assert (tree / "grads.py").read_text() == GRADS
    # a module of the run that imports grads.py: the one that does not is told where the registration is
    tree = _tree(tmp_path, grads=GRADS, elsewhere=NO_IMPORT, uses=USES)
    result = cli(tree, "-j", "1")
    assert ("elsewhere.py:5", "GRL102") in _diagnostics(result.output)
    assert "matches no @RegisterGradient here or in the run" in result.output


def test_output_does_not_depend_on_jobs(tmp_path):
    outputs = []
    for jobs in ("1", "2"):
        tree = _tree(tmp_path / jobs, grads=GRADS, uses=USES, opaque=OPAQUE_USE, elsewhere=NO_IMPORT,
                     plain=NO_IMPORT.replace("ReverseCross", "Unknown"))
        result = cli(tree, "-j", jobs, "--format", "json")
        outputs.append(result.output.replace(str(tree), "TREE"))
    assert outputs[0] == outputs[1]


def test_registration_used_by_no_block_of_the_run_is_noted(tmp_path):
    one = '''\
    import tensorflow as tf


    @tf.RegisterGradient("UsedElsewhere")
    def _elsewhere(op, grad):
        return -grad


    @tf.RegisterGradient("UsedHere")
    def _here(op, grad):
        return grad * 0.5


    def here(x):
        with tf.get_default_graph().gradient_override_map({"Identity": "UsedHere"}):
            return tf.identity(x)
    '''
    tree = _tree(tmp_path, one=one)
    result = cli(tree / "one.py")
    assert ("one.py:4", "GRL202") in _diagnostics(result.output)
    assert "UsedElsewhere" in result.output and "_here(x)" in result.output


STAR = pathlib.Path(__file__).parent / "cases" / "repo" / "star_imported_module"


def _migrated_gr(tmp_path, files, *options):
    tree = tmp_path / "tree"
    tree.mkdir(parents=True)
    for name in files:
        (tree / name).write_text((STAR / name).read_text())
    for jobs in ("1", "2"):
        result = cli(tree / "GR.py" if files == ["GR.py"] else tree, "-j", jobs, "--no-cache", *options)
        assert result.exit_code == 0, result.output
        yield result.stdout


def test_a_star_imported_module_keeps_every_name_it_hands_on(tmp_path):
    """`from GR import *` hands on GR's public module-level names, its imports too: where a
    module of the run star-imports GR, a name the rewrite made dead there stays (GRAD_NAME);
    its imports stay whoever imports it (a star-import from outside the run cannot be seen), so
    --use-runtime keeps `import tensorflow as tf` though GR no longer uses it."""
    for options in ((), ("--use-runtime",)):
        for diff in _migrated_gr(tmp_path / "-".join(options or ("inline",)), ["GR.py", "model.py"], *options):
            assert "-GRAD_NAME" not in diff and "-import tensorflow as tf" not in diff, diff
            assert "-from tensorflow.python.framework import ops" not in diff
        for diff in _migrated_gr(tmp_path / ("alone" + "-".join(options)), ["GR.py"], *options):
            assert "-GRAD_NAME = " in diff  # no consumer in the run: the constant only served the override
            assert "-import tensorflow as tf" not in diff  # ...but the imports stay


def test_names_a_literal_all_leaves_out_are_not_handed_on():
    from tf_grl_migrate.migrator.codemod import migrate_code

    source = "__all__ = ['flip']\n" + (STAR / "GR.py").read_text()
    migrated = migrate_code(source).code
    assert "from tensorflow.python.framework import ops" not in migrated  # `import *` hands on `flip` only
    assert "import tensorflow as tf" in migrated  # the rewrite uses it


def _written(root: pathlib.Path, files: dict) -> list[str]:
    """The paths of ``files`` (relative path -> text), written under ``root``, in order."""
    out = []
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        out.append(str(root / name))
    return out


def test_star_imports_are_looked_up_only_for_the_modules_the_run_may_change(tmp_path):
    """A module that star-imports a module the run cannot change is not parsed for it (the scan
    cost of issue #39); one that star-imports a module with an override is, in every spelling."""
    from tf_grl_migrate.migrator.facts import star_imported

    grads, other, *_ = paths = _written(tmp_path, {
        "pkg/grads.py": "x = 1\n", "pkg/other.py": "y = 2\n", "pkg/plain.py": "from .other import *\n",
        "pkg/tricky.py": "import os; from .grads import *\n",  # not at a line's start: parsed
        "pkg/broken.py": "from .other import *\ndef (:\n"})  # would fail to parse: never parsed
    sources = {p: pathlib.Path(p).read_bytes() for p in paths[2:]}
    assert star_imported(paths, [str(tmp_path)], sources, wanted={grads}) == {grads}
    assert star_imported(paths, [str(tmp_path)], sources) == {grads, other}


def test_a_star_import_the_prefilter_cannot_place_is_parsed_only_where_it_may_name_a_wanted_module(
        tmp_path, monkeypatch):
    """`import *` in a string (the line scan and the count disagree) is parsed only where the text
    spells a wanted module's name or may import relatively from a folder holding one."""
    import ast

    from tf_grl_migrate.migrator import facts

    init, grads, generator, *_ = paths = _written(tmp_path, {
        "pkg/__init__.py": "x = 1\n", "pkg/grads.py": "x = 1\n",
        "tools/generator.py": 'TEMPLATE = "from . import *"\nLINE = "import *"\n',
        "pkg/sub/upward.py": "import os; from .. import *\n",
        "tools/spelled.py": "import os; from pkg.grads import *\n"})
    sources = {p: pathlib.Path(p).read_bytes() for p in paths[2:]}
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda raw, *a, **k: parsed.append(raw) or real_parse(raw, *a, **k))
    found = facts.star_imported(paths, [str(tmp_path)], sources, wanted={init, grads})
    assert found == {init, grads}
    assert sources[generator] not in parsed and len(parsed) == 2


def test_a_cached_result_of_a_module_alone_is_not_reused_once_another_module_star_imports_it(tmp_path, monkeypatch):
    """The warm scan answers from the cache first: a module the run changes is still looked for
    among the star-imports, and once one star-imports it, its dead names stay (its result differs)."""
    monkeypatch.setenv("TF_GRL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "GR.py").write_text((STAR / "GR.py").read_text())
    alone = cli(tree, "-j", "1")
    assert "-GRAD_NAME = " in alone.stdout
    (tree / "model.py").write_text((STAR / "model.py").read_text())
    for _ in range(2):  # filled, then answered from the cache
        both = cli(tree, "-j", "1")
        assert "-GRAD_NAME" not in both.stdout and "GR.py" in both.stdout, both.stdout


def test_paths_given_as_a_generator_link_as_a_list_does(tmp_path):
    """migrate_paths reads its paths once: a generator of paths gives the run the same roots as a
    list (the folders up to which an absolute import is looked for: here `import grads` in
    sub/uses.py means the root's grads.py)."""
    from tf_grl_migrate import migrate_paths

    tree = _tree(tmp_path, grads=GRADS)
    _tree(tree / "sub", uses=USES)

    def said(paths):
        return [(r.path, r.changed, [(d.code, d.line) for d in r.diagnostics])
                for r in migrate_paths(paths, cache=False, jobs=1)]

    listed = said([str(tree)])
    assert [changed for _, changed, _ in listed] == [True, True]  # both ends of the link migrate
    assert said(p for p in [str(tree)]) == listed


DEFUN_OPS = """\
import tensorflow as tf
from tensorflow.python.framework import function


@function.Defun(tf.float32, python_grad_func=lambda op, g: g * 0.25)
def quarter_gradient(x):
    return x
"""


def test_calls_of_a_defun_are_looked_for_again_only_in_files_that_changed(tmp_path, monkeypatch):
    """The look for uses reads every module of the run; a run over the same functions and files
    reads again only those whose signature changed since their bytes ruled a use out (spelling
    none of the names), and those that spell one (a use depends on other modules' imports too)."""
    from tf_grl_migrate.migrator import files, signatures

    monkeypatch.setattr(signatures, "RACY_NS", 0)  # the files were just written
    calls = "from pkg.ops import quarter_gradient\n\n\ndef damped(x):\n    return quarter_gradient(x)\n"
    package = _tree(tmp_path / "pkg", __init__="", ops=DEFUN_OPS, model=calls, other="quarter = None\n",
                    edited="x = 1\n")
    read = files.read
    reads: list[str] = []
    monkeypatch.setattr(files, "read", lambda path: (reads.append(path), read(path))[1])
    assert "1 file would migrate" in cli(package, "-j", "1").output
    assert any(p.endswith("other.py") for p in reads)
    reads.clear()
    _tree(package, edited="x = 2\n")  # not the same run again (its record would answer it all)
    assert "1 file would migrate" in cli(package, "-j", "1").output
    assert not any(p.endswith("other.py") for p in reads), reads
    _tree(package, model=calls.replace("quarter_gradient(x)", 'quarter_gradient(x, name="q")'))
    result = cli(package, "-j", "1")
    assert _diagnostics(result.output) == {("ops.py:5", "GRL115")}, result.output


def test_a_use_reached_by_a_relative_star_import_of_the_package_is_found(tmp_path):
    """The Defun in the package's __init__.py, its use in a module of the package that spells
    no module name (`from . import *`): reached by the relative import."""
    calls = "from . import *\n\n\ndef damped(x):\n    return quarter_gradient(x, name='q')\n"
    package = _tree(tmp_path / "pkg", __init__=DEFUN_OPS, model=calls)
    _tree(tmp_path / "elsewhere", __init__="", model=calls)  # a relative import that cannot reach it
    result = cli(tmp_path, "-j", "1", "--no-cache")
    assert "pkg/__init__.py:5:2: GRL115 model.py:5 calls `quarter_gradient`" in result.output.replace(
        str(package.parent) + "/", ""), result.output


def test_a_notebook_calling_a_defun_with_a_keyword_is_named_by_its_cell(tmp_path):
    import json

    _tree(tmp_path / "pkg", __init__="", ops=DEFUN_OPS)
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["%matplotlib inline\n", "from pkg.ops import quarter_gradient\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["x = 1.0\n", "y = quarter_gradient(x, name='q')\n"]}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))
    result = cli(tmp_path, "-j", "1", "--no-cache")
    assert "train.ipynb:cell 3:2 calls `quarter_gradient` with `name=`" in result.output, result.output
    assert "0 files would migrate" in result.output


def test_a_defun_another_module_calls_with_a_keyword_stays_with_a_refusal_naming_that_call(tmp_path):
    """TF1's Defun took `name=` at its calls; the migrated function takes its inputs only. A call
    from another module of the run cannot lose the keyword in this module's rewrite: the Defun
    stays and the refusal says where the call is. A run given the package folder resolves
    `pkg.ops` too (the root is a package: its imports are spelt from the folder above)."""
    ops = '''\
    import tensorflow as tf
    from tensorflow.python.framework import function


    @function.Defun(tf.float32, python_grad_func=lambda op, g: g * 0.25)
    def quarter_gradient(x):
        return x


    def _half(op, g):
        return g * 0.5


    def _identity(x):
        return x


    half_gradient = function.Defun(tf.float32, python_grad_func=_half)(_identity)
    '''
    calls = '''\
    import tensorflow as tf
    from pkg.ops import quarter_gradient


    def damped(x, scope="damped"):
        return quarter_gradient(tf.tanh(x), name=scope + "/quarter") * 2.0
    '''
    by_attribute = '''\
    from pkg import ops


    def halved(x):
        return ops.half_gradient(x, name="half")
    '''
    plain = '''\
    import pkg.ops


    def both(x):
        return pkg.ops.quarter_gradient(pkg.ops.half_gradient(x))
    '''
    package = _tree(tmp_path / "pkg", __init__="", ops=ops, model=calls, layers=by_attribute, plain=plain)
    for root in (tmp_path, package):
        result = cli(root, "-j", "1", "--no-cache")
        assert _diagnostics(result.output) == {("ops.py:5", "GRL115"), ("ops.py:18", "GRL115")}, result.output
        assert "model.py:6 calls `quarter_gradient` with `name=`" in result.output
        assert "layers.py:5 calls `half_gradient` with `name=`" in result.output
        assert "0 files would migrate" in result.output
    # a read of the function object's attributes, TF1's only
    _tree(package, model=calls.replace('quarter_gradient(tf.tanh(x), name=scope + "/quarter")',
                                       "tf.compat.v1.get_default_graph()._add_function(quarter_gradient.definition)"))
    result = cli(package, "-j", "1", "--no-cache")
    assert "model.py:6 reads `quarter_gradient.definition`, an attribute of TF1's function object" in result.output
    # the package re-exports it (the caller spells neither ops nor anything of it but the name)
    _tree(package, __init__="from .ops import quarter_gradient\n",
          model=calls.replace("from pkg.ops import quarter_gradient", "from pkg import quarter_gradient"))
    assert "model.py:6 calls `quarter_gradient`" in cli(package, "-j", "1", "--no-cache").output
    _tree(package, __init__="")
    # a star-import binds the name too
    _tree(package, model=calls.replace("from pkg.ops import quarter_gradient", "from .ops import *"))
    assert "model.py:6 calls `quarter_gradient`" in cli(package, "-j", "1", "--no-cache").output
    # calls by position only: both migrate (the calls need no change)
    _tree(package, model=calls.replace(', name=scope + "/quarter"', ""),
          layers=by_attribute.replace(', name="half"', ""))
    result = cli(package, "-j", "1", "--no-cache")
    assert "GRL115" not in result.output and "1 file would migrate" in result.output, result.output
