"""The command line: exit statuses, dry run, --write, --check, --format json, stdin."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest
from harness import cli as run

CASES = pathlib.Path(__file__).parent / "cases"
DANN = CASES / "rewrite" / "dann_builder_class"


@pytest.fixture
def tree(tmp_path):
    shutil.copy(DANN / "before.py", tmp_path / "flip_gradient.py")
    shutil.copy(CASES / "noop" / "already_custom_gradient.py", tmp_path / "clean.py")
    (tmp_path / ".venv").mkdir()
    shutil.copy(DANN / "before.py", tmp_path / ".venv" / "vendored.py")
    return tmp_path


def test_dry_run_prints_a_diff_and_writes_nothing(tree):
    before = (tree / "flip_gradient.py").read_bytes()
    result = run(tree, "-j", "1")
    assert result.exit_code == 0, result.output
    assert "+++ b/" in result.stdout and "@tf.custom_gradient" in result.stdout
    assert "vendored" not in result.stdout  # .venv is excluded by default
    assert "1 file would migrate" in result.stderr
    assert (tree / "flip_gradient.py").read_bytes() == before


def test_write_rewrites_in_place_and_is_then_clean(tree):
    assert run(tree, "--write").exit_code == 0
    assert (tree / "flip_gradient.py").read_bytes() == (DANN / "after.py").read_bytes()
    assert run(tree, "--check").exit_code == 0


def test_check_exits_1_when_a_file_would_change(tree):
    result = run(tree, "--check")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"would migrate {tree / 'flip_gradient.py'}" in result.stderr


def test_check_exits_1_on_a_refused_site_and_reports_path_line_col(tmp_path):
    shutil.copy(CASES / "refuse" / "opaque_call_in_block" / "before.py", tmp_path / "enc.py")
    result = run(tmp_path / "enc.py", "--check")
    assert result.exit_code == 1
    assert f"{tmp_path / 'enc.py'}:12:5: GRL101 " in result.stderr
    assert run(tmp_path / "enc.py").exit_code == 0  # a dry run itself succeeded


def test_unparsable_file_is_reported_123_and_the_rest_still_processed(tree):
    py2 = "print 'hello'\nwith g.gradient_override_map({'Identity': 'F'}):\n    y = tf.identity(x)\n"
    (tree / "py2.py").write_text(py2)
    result = run(tree, "--write")
    assert result.exit_code == 123
    assert "py2.py:" in result.stderr and "GRL902 cannot parse" in result.stderr
    assert (tree / "py2.py").read_text() == py2
    assert (tree / "flip_gradient.py").read_bytes() == (DANN / "after.py").read_bytes()


def test_usage_errors_exit_2(tree):
    assert run().exit_code == 2
    assert run(tree, "--write", "--check").exit_code == 2
    assert run(tree / "missing.py").exit_code == 2
    assert run(tree, "--format", "yaml").exit_code == 2


def test_json_report(tree):
    shutil.copy(CASES / "refuse" / "unmatched_name" / "before.py", tree / "unmatched.py")
    result = run(tree, "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    by_name = {pathlib.Path(f["path"]).name: f for f in doc["files"]}
    assert by_name["flip_gradient.py"]["changed"] is True
    assert by_name["clean.py"] == {"path": str(tree / "clean.py"), "changed": False, "written": False,
                                   "diagnostics": []}
    [diag] = by_name["unmatched.py"]["diagnostics"]
    assert (diag["line"], diag["col"], diag["code"], diag["severity"]) == (6, 5, "GRL102", "error")
    assert doc["totals"] == {"files": 3, "changed": 1, "refused": 1, "failed": 0}


def test_stdin_to_stdout():
    result = run("-", input=(DANN / "before.py").read_text())
    assert result.exit_code == 0
    assert result.stdout == (DANN / "after.py").read_text()
    assert run("-", "--check", input=(DANN / "before.py").read_text()).exit_code == 1


def test_exclude_options(tree):
    result = run(tree, "--extend-exclude", "flip_gradient", "--check")
    assert result.exit_code == 0
    result = run(tree, "--exclude", "^$", "--check", "-q")  # nothing excluded: .venv is walked too
    assert result.exit_code == 1 and result.stderr == ""


def test_parallel_output_is_identical_to_serial(tree):
    for i in range(5):
        shutil.copy(DANN / "before.py", tree / f"copy{i}.py")
    serial, parallel = run(tree, "-j", "1"), run(tree, "-j", "2")
    assert serial.stdout == parallel.stdout and serial.stderr == parallel.stderr


def test_python_dash_m_and_version():
    out = subprocess.run([sys.executable, "-m", "tf_grl_migrate", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "tf-grl-migrate" in out.stdout
    code = "import sys, tf_grl_migrate.cli; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    # the CLI's start-up path (--help, a tree without candidates) loads none of the analysis
    code = ("import sys, tf_grl_migrate.cli; print(sorted(m for m in sys.modules if m in ('libcst', 'dataclasses') "
            "or m.startswith('tf_grl_migrate.migrator.idioms')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def test_bundled_fixtures_demo():
    fixtures = pathlib.Path(__file__).parent.parent / "fixtures"
    result = run(fixtures, "-j", "1")
    assert result.exit_code == 0
    assert result.stdout.count("+++ b/") == 2
    assert "saliency.py:13:5: GRL101" in result.stderr


def test_default_excludes_apply_below_the_top_directory(tree):
    nested = tree / "pkg" / ".git"
    nested.mkdir(parents=True)
    shutil.copy(DANN / "before.py", nested / "hook.py")
    result = run(tree, "--check", "--extend-exclude", "flip_gradient")
    assert result.exit_code == 0, result.stderr


def test_use_runtime_flag():
    result = run("-", "--use-runtime", input=(DANN / "before.py").read_text())
    assert result.exit_code == 0
    assert result.stdout == (
        "import tensorflow as tf\nfrom tensorflow.python.framework import ops\n\n"
        "from tf_grl_migrate import FlipGradientBuilder\n\n\nflip_gradient = FlipGradientBuilder()\n")


def test_write_summary_counts_only_files_written(tree):
    """A read-only file is reported (GRL905) and not counted as migrated."""
    (tree / "flip_gradient.py").chmod(0o444)
    shutil.copy(DANN / "before.py", tree / "writable.py")
    result = run(tree, "--write", "-j", "1")
    assert result.exit_code == 123, result.output
    assert "GRL905" in result.output
    assert "1 file migrated, 0 sites refused, 1 file failed, 3 checked" in result.output  # .venv excluded


def test_dry_run_of_dot_applies_with_git(tree, monkeypatch):
    """`tf-grl-migrate . | git apply` from the repository root: headers name a/flip_gradient.py,
    not a/./flip_gradient.py (which git rejects)."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    (tree / "sub").mkdir()
    shutil.copy(DANN / "before.py", tree / "sub" / "nested.py")
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tree), "PATH": ""}
    subprocess.run([git, "init", "-q", str(tree)], check=True, env=env)
    monkeypatch.chdir(tree)
    for path in (".", "./sub/../flip_gradient.py", str(tree / "sub")):
        result = run(path, "-j", "1", "--no-cache")
        assert result.exit_code == 0, result.output
        assert "a/./" not in result.stdout and "/../" not in result.stdout and str(tree) not in result.stdout
        check = subprocess.run([git, "apply", "--check", "-"], input=result.stdout, text=True, capture_output=True,
                               env=env)
        assert check.returncode == 0, (path, check.stderr)
    diff = run(".", "-j", "1", "--no-cache").stdout
    subprocess.run([git, "apply", "-"], input=diff, text=True, check=True, env=env)
    assert run(".", "--check", "-j", "1", "--no-cache").exit_code == 0


def test_keras_engine_import_is_respelled_or_gets_a_note_not_a_failure(tmp_path):
    """A migrated module importing Layer from keras.engine (which Keras 3 removed) imports it from
    keras.layers; a name Keras 3 has nowhere gets a GRL201 note, and the file still migrates."""
    path = tmp_path / "grl_layer.py"
    path.write_text("from keras.engine import Layer\n" + (DANN / "before.py").read_text())
    result = run(path, "--write", "--no-cache")
    assert result.exit_code == 0, result.output
    assert path.read_text().startswith("from keras.layers import Layer\n")
    assert "GRL201" not in result.output
    path.write_text("from keras.engine import Network\n" + (DANN / "before.py").read_text())
    result = run(path, "--write", "--no-cache")
    assert f"{path}:1:1: GRL201 note: Keras 3 has no Network where `from keras.engine import Network` finds it" \
        in result.output
    assert "1 file migrated, 0 sites refused, 0 files failed, 1 checked" in result.output
    assert run(path, "--check", "--no-cache").exit_code == 0  # migrated: nothing left to say
    path.write_text("from keras.engine import Network\n" + (DANN / "before.py").read_text())
    data = json.loads(run(path, "--format", "json", "--no-cache").stdout)
    assert [(d["code"], d["severity"]) for d in data["files"][0]["diagnostics"]] == [("GRL201", "note")]
    assert data["totals"]["refused"] == 0


def test_a_run_still_going_after_a_while_opens_a_progress_bar():
    """One long module shows progress too: the bar opens after PROGRESS_AFTER_S, not only for
    runs of PROGRESS_MIN_FILES files; a run done before then never shows one."""
    import io
    import time

    from tf_grl_migrate.cli import _Progress

    with _Progress(True, after=0.05, stream=io.StringIO()) as slow:
        slow.update(0, 1)
        time.sleep(0.3)
        assert slow.bar is not None
        slow.update(1, 1)
    with _Progress(True, after=5.0, stream=io.StringIO()) as quick:
        quick.update(0, 1)
        quick.update(1, 1)
    assert quick.bar is None
    with _Progress(False, after=0.01, stream=io.StringIO()) as off:
        off.update(0, 1)
        time.sleep(0.1)
    assert off.bar is None


def test_write_exits_1_while_an_override_is_left_and_0_when_none_is(tmp_path):
    """As `ruff check --fix`: the write happened, and the exit status says whether the user still
    has something to do (a refused site, named on stderr)."""
    refused = tmp_path / "refused.py"
    refused.write_text("import tensorflow as tf\n\n\ndef f(x, m):\n"
                       "    with tf.get_default_graph().gradient_override_map(m):\n        return tf.sign(x)\n")
    result = run(refused, "--write")
    assert result.exit_code == 1 and "GRL105" in result.stderr
    done = tmp_path / "done.py"
    done.write_text((DANN / "before.py").read_text())
    assert run(done, "--write").exit_code == 0


def test_explain_says_what_a_code_means_with_its_example():
    result = run("--explain", "GRL115")
    assert result.exit_code == 0 and result.stdout.startswith("GRL115: function.Defun")
    assert "example:" in result.stdout and "the tool says (line" in result.stdout and "details:" in result.stdout
    assert run("--explain", "GRL999").exit_code == 2


def test_each_diagnostic_is_one_line_and_the_json_carries_its_details(tmp_path):
    path = tmp_path / "outside.py"
    path.write_text("import tensorflow as tf\n\n\ndef f(x):\n"
                    "    ctx = tf.get_default_graph().gradient_override_map({'Sign': 'Identity'})\n"
                    "    return tf.sign(x)\n")
    text = run(path)
    [line] = [ln for ln in text.stderr.splitlines() if "GRL111" in ln]
    assert line.endswith("rewrite the affected ops with @tf.custom_gradient (--use-runtime migrates it)")
    [d] = json.loads(run(path, "--format", "json").stdout)["files"][0]["diagnostics"]
    assert d["message"] == ("gradient_override_map is entered outside a `with` statement: rewrite the affected ops "
                            "with @tf.custom_gradient") and "TF2 ignores the map" in d["details"]
    # the hint is a field of its own, which the line shows after the message
    assert d["hints"] == ["--use-runtime migrates it"]
    assert line.split("GRL111 ", 1)[1] == d["message"] + " (--use-runtime migrates it)"


def test_usage_lists_every_code_with_a_line():
    from tf_grl_migrate.codes import CODES

    usage = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text()
    assert all(f"- `{code}` {title}" in usage for code, title in CODES.items())
