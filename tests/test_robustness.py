"""The tool over every .py file of the standard library and the installed tensorflow and keras:
no crash, no failure, and nothing rewritten (TensorFlow's own override uses are refused)."""

import json
import pathlib
import sysconfig

import pytest
from click.testing import CliRunner

from tf_grl_migrate.cli import main
from tf_grl_migrate.migrator.codemod import migrate_code
from tf_grl_migrate.migrator.precheck import MARKER

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

TREES = [
    sysconfig.get_paths()["stdlib"],
    str(pathlib.Path(tf.__file__).parent),
    str(pathlib.Path(keras.__file__).parent),
]


@pytest.mark.slow
def test_whole_trees_check_cleanly():
    result = CliRunner().invoke(main, ["--check", "--format", "json", "--exclude", "^$", *TREES])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    doc = json.loads(result.stdout)
    assert doc["totals"]["files"] > 10_000
    assert doc["totals"]["changed"] == 0 and doc["totals"]["failed"] == 0
    flagged = {f["path"]: [d["code"] for d in f["diagnostics"]] for f in doc["files"] if f["diagnostics"]}
    # TensorFlow's custom_gradient implementation enters the map for an IdentityN op: refused, not rewritten
    assert any(p.endswith("tensorflow/python/ops/custom_gradient.py") for p in flagged)
    # refusals, and notes on TensorFlow's own Defuns without a gradient (TF2 gives them no gradient in a tf.function)
    assert all(code.startswith("GRL1") or code == "GRL205" for codes in flagged.values() for code in codes)


@pytest.mark.slow
def test_full_analysis_of_every_candidate_file():
    """Bypass the cheap screen: libcst's analysis of each file that mentions the map must not crash
    and must propose no rewrite."""
    candidates = [p for tree in TREES for p in pathlib.Path(tree).rglob("*.py")
                  if MARKER.encode() in p.read_bytes()]
    assert candidates
    for path in candidates:
        source = path.read_text(encoding="utf-8")
        result = migrate_code(source, screen=False)
        assert result.code == source, path
        assert all(d.code.startswith("GRL1") for d in result.diagnostics), (path, result.diagnostics)
