"""The package as people install it: sdist and wheel contents, a venv without TensorFlow, the
stable Python API (and that the CLI agrees with it), the JSON schema, the LibCST codemod
command through LibCST's own runner, and the README's CI recipes. No network anywhere."""

import email
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import harness
import pytest

import tf_grl_migrate
from tf_grl_migrate import api

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "dann_repo"
IGNORE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                ".hypothesis", "*.pyc")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """sdist and wheel built from a copy of the tree with the installed backend (no isolation,
    so nothing is downloaded)."""
    pytest.importorskip("build")
    work = tmp_path_factory.mktemp("build")
    src = work / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE)
    out = work / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def test_sdist_carries_tests_fixtures_tools_readme_and_license(built):
    sdist, _ = built
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    version = tf_grl_migrate.__version__
    assert sdist.name in (f"tf_grl_migrate-{version}.tar.gz", f"tf-grl-migrate-{version}.tar.gz")  # PEP 625 or older
    for needed in (
        "LICENSE",
        "README.md",
        "docs/usage.md",
        "docs/runtime.md",
        "pyproject.toml",
        "tests/harness.py",
        "tests/test_publishing.py",
        "tests/cases/rewrite/dann_builder_class/before.py",
        "fixtures/dann_repo/flip_gradient.py",
        "tools/generate_tf_renames.py",
        "tools/tf_1_0_symbol_renames.json",
        "tf_grl_migrate/py.typed",
        "tf_grl_migrate/report.schema.json",
    ):
        assert needed in names, needed
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_wheel_contents_and_metadata(built):
    _, wheel = built
    version = tf_grl_migrate.__version__
    assert wheel.name == f"tf_grl_migrate-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = email.message_from_bytes(zf.read(f"tf_grl_migrate-{version}.dist-info/METADATA"))
        entry_points = zf.read(f"tf_grl_migrate-{version}.dist-info/entry_points.txt").decode()
    assert {"tf_grl_migrate/py.typed", "tf_grl_migrate/report.schema.json", "tf_grl_migrate/api.py",
            "tf_grl_migrate/knowledge/_tf_op_table.json", "tf_grl_migrate/knowledge/_tf_api_names.txt",
            "tf_grl_migrate/knowledge/_tf_renames.py", "tf_grl_migrate/libcst_command.py"} <= names
    assert any(n.startswith(f"tf_grl_migrate-{version}.dist-info/") and n.endswith("LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "fixtures/", "tools/")) for n in names)
    assert meta["Version"] == version and "Apache-2.0" in (meta["License"], meta["License-Expression"])
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    assert {u.split(",")[0] for u in meta.get_all("Project-URL")} == {"Homepage", "Source", "Issues", "Changelog"}
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("libcst") for r in requires) and any(r.startswith("click") for r in requires)
    assert not any(r.startswith("tensorflow") and "extra" not in r for r in requires)  # TensorFlow stays optional
    assert "tf-grl-migrate = tf_grl_migrate.__main__:main" in entry_points


def test_wheel_in_a_fresh_venv_without_tensorflow(built, tmp_path):
    """pip install of the wheel into a fresh venv: the CLI on the fixtures and an API call, with no
    TensorFlow there. libcst and click come from this test environment (no network), nothing else."""
    _, wheel = built
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    site = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
    deps = tmp_path / "deps"
    deps.mkdir()
    import click
    import libcst
    import yaml

    for module in (libcst, click, yaml):
        top = pathlib.Path(module.__file__).parent
        (deps / top.name).symlink_to(top)
    (site / "only-libcst-and-click.pth").write_text(str(deps) + "\n")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TF_GRL_MIGRATE_CACHE_DIR"] = str(tmp_path / "cache")
    no_tf = subprocess.run([str(python), "-c", "import tensorflow"], capture_output=True, text=True, env=env)
    assert no_tf.returncode != 0 and "No module named 'tensorflow'" in no_tf.stderr
    cli = subprocess.run([str(bindir / "tf-grl-migrate"), str(FIXTURES)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert "+++ b/" in cli.stdout and "@tf.custom_gradient" in cli.stdout
    assert "2 files would migrate, 1 site refused, 0 files failed" in cli.stderr
    call = ("import sys, tf_grl_migrate as t\n"
            "r = t.migrate_source(open(sys.argv[1]).read())\n"
            "assert r.changed and r.diagnostics == [] and '@tf.custom_gradient' in r.code\n"
            "reports = t.migrate_paths([sys.argv[2]])\n"
            "assert [p.changed for p in reports] == [True, False, True, False], reports\n"
            "assert 'tensorflow' not in sys.modules\n"
            "print('ok', t.__version__)\n")
    api_run = subprocess.run([str(python), "-c", call, str(FIXTURES / "flip_gradient.py"), str(FIXTURES)],
                             capture_output=True, text=True, env=env, timeout=300)
    assert api_run.returncode == 0, api_run.stderr
    assert api_run.stdout.strip() == f"ok {tf_grl_migrate.__version__}"


def test_version_is_single_sourced():
    from importlib.metadata import version

    assert version("tf-grl-migrate") == tf_grl_migrate.__version__
    assert harness.cli("--version").output.strip().endswith(tf_grl_migrate.__version__)
    assert not re.search(r'^version = "', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)


def test_package_import_loads_neither_tensorflow_nor_libcst():
    code = ("import sys, tf_grl_migrate as t; t.migrate_source; t.Diagnostic; "
            "print(sorted(m for m in ('tensorflow', 'libcst') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("case", harness.case_dirs("rewrite")[:8], ids=lambda p: p.name)
def test_api_migrate_source_is_the_engines_answer(case):
    from tf_grl_migrate.migrator.codemod import migrate_code

    source = (case / "before.py").read_text()
    for use_runtime in (False, True):
        result = api.migrate_source(source, use_runtime=use_runtime)
        expected = migrate_code(source, use_runtime=use_runtime)
        assert (result.code, result.diagnostics) == (expected.code, expected.diagnostics)
        assert result.changed and result.original == source


def test_api_never_raises_for_bad_input(tmp_path):
    broken = api.migrate_source("def f(:\n    g.gradient_override_map\n")
    assert not broken.changed and [d.code for d in broken.diagnostics] == ["GRL902"]
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe gradient_override_map \x00")
    reports = api.migrate_paths([tmp_path / "bad.py", tmp_path / "missing.py"], cache=False)
    assert [(pathlib.Path(r.path).name, r.failed) for r in reports] == [("bad.py", True), ("missing.py", True)]
    with pytest.raises(TypeError, match="decode bytes first"):
        api.migrate_source(b"x = 1\n")


def test_cli_and_api_agree_on_a_tree(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES, tree)
    shutil.copytree(harness.CASES / "refuse" / "opaque_call_in_block", tree / "refused")
    from_api = api.migrate_paths([tree], diff=True, cache=False)
    from_cli = json.loads(harness.cli(tree, "--format", "json", "--no-cache", "-j", "1").stdout)
    assert [f["path"] for f in from_cli["files"]] == [r.path for r in from_api]
    for data, report in zip(from_cli["files"], from_api):
        assert data["changed"] == report.changed
        assert data["diagnostics"] == [d.to_json() for d in sorted(report.diagnostics)]
    diff = harness.cli(tree, "--no-cache", "-j", "1").stdout
    assert diff == "".join(r.diff for r in from_api)


def _schema():
    return json.loads((pathlib.Path(tf_grl_migrate.__file__).parent / "report.schema.json").read_text())


def test_json_output_validates_against_the_shipped_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(_schema())
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES, tree)
    (tree / "broken.py").write_text("gradient_override_map(\n")
    shutil.copy(harness.CASES / "refuse" / "unknown_op_type" / "before.py", tree / "refused.py")
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                     "source": ["%matplotlib inline\n", "with g.gradient_override_map({'Sign': 'Identity'}):\n",
                                "    y = tf.sign(x)\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tree / "nb.ipynb").write_text(json.dumps(nb))
    (tree / "keras_layer.py").write_text(
        "from keras.engine import Network\n" + (FIXTURES / "flip_gradient.py").read_text()
    )
    outputs = [harness.cli(tree, "--format", "json", "--no-cache", *flags).stdout for flags in ([], ["--check"])]
    outputs.append(harness.cli("-", "--format", "json", input=b"\xff\xfe\x00bad").stdout)  # undecodable stdin
    seen = set()
    for out in outputs:
        data = json.loads(out)
        validator.validate(data)
        seen |= {(d["code"][:4], d["severity"], "cell" in d) for f in data["files"] for d in f["diagnostics"]}
    assert {
        ("GRL1", "error", False),
        ("GRL1", "error", True),
        ("GRL2", "note", False),
        ("GRL9", "error", False),
    } <= seen


def test_libcst_codemod_command_through_libcsts_runner(tmp_path):
    from libcst.codemod import CodemodContext, parallel_exec_transform_with_prettyprint

    from tf_grl_migrate.libcst_command import MigrateGradientOverrides

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for tree in (ours, theirs):
        shutil.copytree(FIXTURES, tree)
    assert harness.cli(ours, "--write", "--no-cache", "-j", "1").exit_code == 1  # the fixtures keep one refusal
    files = sorted(str(p) for p in theirs.glob("*.py"))
    result = parallel_exec_transform_with_prettyprint(MigrateGradientOverrides(CodemodContext()), files, jobs=1,
                                                      hide_progress=True, repo_root=str(theirs))
    assert (result.successes, result.failures, result.skips) == (len(files), 0, 0)
    assert result.warnings == 1  # saliency.py's model-wide override, GRL101
    for path in theirs.glob("*.py"):
        assert path.read_text() == (ours / path.name).read_text(), path.name


def test_libcst_tool_command_line_finds_and_runs_the_command(tmp_path):
    tree = tmp_path / "repo"
    shutil.copytree(FIXTURES, tree)
    (tree / ".libcst.codemod.yaml").write_text(
        "generated_code_marker: '@generated'\nformatter: ['black', '-']\nblacklist_patterns: []\n"
        "modules: ['tf_grl_migrate']\nrepo_root: '.'\n")
    done = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "libcst_command.MigrateGradientOverrides",
                           "--no-format", "-j", "1", "--use-runtime", "."],
                          cwd=tree, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "GRL1" not in done.stderr  # saliency.py's model-wide block moves onto the runtime map
    assert "tf_grl_migrate.gradient_override_map({" in (tree / "saliency.py").read_text()
    assert (tree / "flip_gradient.py").read_text() == (

        "import tensorflow as tf\nfrom tensorflow.python.framework import ops\n\n"
        "from tf_grl_migrate import FlipGradientBuilder\n\n\nflip_gradient = FlipGradientBuilder()\n")


def _readme_yaml_blocks():
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    return re.findall(r"```yaml\n(.*?)```", text, flags=re.S)


def test_readme_ci_recipes_are_valid_and_name_real_hooks():
    yaml = pytest.importorskip("yaml")
    blocks = [yaml.safe_load(block) for block in _readme_yaml_blocks()]
    hook_ids = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    workflows = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
    precommit = [b for b in blocks if isinstance(b, dict) and "repos" in b]
    assert workflows and len(precommit) == 2
    steps = workflows[0]["jobs"]["gradient-overrides"]["steps"]
    assert any(s.get("with", {}).get("path") == "~/.cache/tf-grl-migrate" for s in steps)
    assert any("tf-grl-migrate --check" in s.get("run", "") for s in steps)
    remote, local = (b["repos"][0] for b in precommit)
    assert {h["id"] for h in remote["hooks"]} <= hook_ids and remote["rev"] == f"v{tf_grl_migrate.__version__}"
    assert local["repo"] == "local" and local["hooks"][0]["language"] == "python"
    assert local["hooks"][0]["entry"] == "tf-grl-migrate --check"
    urls = (ROOT / "pyproject.toml").read_text()
    assert f'Source = "{remote["repo"]}"' in urls  # the publisher fills the URL in one place


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_libcst_codemod_command_migrates_linked_modules_as_the_cli_does(tmp_path, jobs):
    """A registration name constant in grads.py, the override in model.py: the codemod command
    gathers the repository's cross-module facts before any file changes (as FullRepoManager does
    for LibCST's metadata), so both ends are migrated as `tf-grl-migrate --write` migrates them,
    with one worker or several."""
    case = ROOT / "tests" / "cases" / "repo" / "registration_constant_two_modules"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for tree in (ours, theirs):
        tree.mkdir()
        for path in case.glob("*.py"):
            shutil.copy(path, tree / path.name)
    assert harness.cli(ours, "--write", "--no-cache", "-j", "1").exit_code == 0
    (theirs / ".libcst.codemod.yaml").write_text(
        "generated_code_marker: '@generated'\nformatter: ['black', '-']\nblacklist_patterns: []\n"
        "modules: ['tf_grl_migrate']\nrepo_root: '.'\n")
    done = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "libcst_command.MigrateGradientOverrides",
                           "--no-format", "-j", jobs, "."], cwd=theirs, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "GRL1" not in done.stderr
    for path in case.glob("*.py"):
        assert (theirs / path.name).read_text() == (ours / path.name).read_text(), path.name
    assert (ours / "grads.py").read_text() != (case / "grads.py").read_text()


def test_libcst_codemod_warnings_carry_the_diagnostics_hints():
    """A refusal's hint is a field of the diagnostic (not spliced into its message): the LibCST
    command's warning still says it, as the one-line text report does."""
    import libcst
    from libcst.codemod import CodemodContext

    from tf_grl_migrate.libcst_command import MigrateGradientOverrides

    source = ("import tensorflow as tf\n\n\ndef f(x):\n"
              "    ctx = tf.get_default_graph().gradient_override_map({'Sign': 'Identity'})\n"
              "    return tf.sign(x)\n")
    context = CodemodContext()
    MigrateGradientOverrides(context).transform_module(libcst.parse_module(source))
    [warning] = context.warnings
    assert warning.startswith("GRL111 5:11: ") and warning.endswith("(--use-runtime migrates it)")
