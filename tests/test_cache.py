"""The result cache: a repeated run is answered from it with exactly the fresh result."""

import json
import pathlib
import shutil
import time

import pytest
from harness import cli as run

from tf_grl_migrate.migrator import cache as cache_mod
from tf_grl_migrate.migrator import codemod, signatures

CASES = pathlib.Path(__file__).parent / "cases"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(CASES / "rewrite" / "dann_builder_class" / "before.py", root / "flip_gradient.py")
    shutil.copy(CASES / "rewrite" / "sign_straight_through" / "before.py", root / "ste.py")
    shutil.copy(CASES / "refuse" / "opaque_call_in_block" / "before.py", root / "refused.py")
    shutil.copy(CASES / "noop" / "already_custom_gradient.py", root / "clean.py")
    dann = (CASES / "rewrite" / "dann_builder_class" / "before.py").read_text()
    # the same text as flip_gradient.py in other bytes: a latin-1 cookie and CRLF newlines
    header = "# -*- coding: latin-1 -*-\n# Auteur: Fran\xe7ois\n"
    (root / "latin1_crlf.py").write_bytes((header + dann).replace("\n", "\r\n").encode("latin-1"))
    return root


def entries():
    root = pathlib.Path(cache_mod.default_dir())
    return sorted(p for p in root.rglob("*.json") if p.name != "quiet.json") if root.exists() else []  # results


def _no_analysis(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("libcst analysis ran although the cache holds the result")

    monkeypatch.setattr(codemod, "migrate_code", boom)


@pytest.mark.parametrize("mode", [[], ["--check"], ["--format", "json"], ["--use-runtime"]])
def test_second_run_is_answered_from_the_cache_with_identical_output(tree, monkeypatch, mode):
    first = run(tree, "-j", "1", *mode)
    assert first.exit_code in (0, 1), first.output
    assert len(entries()) == 4  # one per file that mentions gradient_override_map
    _no_analysis(monkeypatch)
    second = run(tree, "-j", "1", *mode)
    assert (second.exit_code, second.stdout, second.stderr) == (first.exit_code, first.stdout, first.stderr)


def test_write_from_a_cache_hit_gives_the_same_bytes(tree, tmp_path, monkeypatch):
    fresh = tmp_path / "fresh"
    shutil.copytree(tree, fresh)
    written = run(fresh, "--write", "--no-cache").exit_code
    assert written in (0, 1)  # 1: a refused site is left for the user
    assert entries() == []  # --no-cache stores nothing
    assert run(tree, "--check").exit_code == 1
    _no_analysis(monkeypatch)
    assert run(tree, "--write").exit_code == written
    for path in fresh.iterdir():
        assert (tree / path.name).read_bytes() == path.read_bytes(), path.name


def test_no_cache_analyses_afresh(tree, monkeypatch):
    assert run(tree, "-j", "1").exit_code == 0
    _no_analysis(monkeypatch)
    result = run(tree, "-j", "1", "--no-cache")
    assert result.exit_code == 123 and "GRL903" in result.stderr  # it did call the analysis


def test_inline_and_runtime_results_are_separate_entries(tree):
    inline = run(tree / "flip_gradient.py")
    runtime = run(tree / "flip_gradient.py", "--use-runtime")
    assert "from tf_grl_migrate import FlipGradientBuilder" in runtime.stdout
    assert "from tf_grl_migrate import" not in inline.stdout
    assert run(tree / "flip_gradient.py").stdout == inline.stdout
    assert len(entries()) == 2


def test_internal_errors_are_not_remembered(tree, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("bug")

    with monkeypatch.context() as patch:
        patch.setattr(codemod, "migrate_code", broken)
        assert "GRL903" in run(tree / "ste.py").stderr
    assert entries() == []
    assert run(tree / "ste.py").exit_code == 0 and len(entries()) == 1


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"format": 1}', b'[1, 2]',
                                     b'{"format": 1, "key": "K", "code": 3, "diagnostics": []}'])
def test_a_corrupt_entry_is_a_miss_and_is_replaced(tree, garbage):
    expected = run(tree / "ste.py")
    (entry,) = entries()
    entry.write_bytes(garbage.replace(b"K", entry.stem.encode()))
    again = run(tree / "ste.py")
    assert (again.exit_code, again.stdout) == (expected.exit_code, expected.stdout)
    assert json.loads(entry.read_text())["key"] == entry.stem


def test_an_unusable_cache_directory_only_costs_speed(tree, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("TF_GRL_MIGRATE_CACHE_DIR", str(blocker))
    result = run(tree, "--check")
    assert result.exit_code == 1 and "GRL9" not in result.stderr


def test_fingerprint_covers_libcst_and_every_module_of_the_package(monkeypatch, tmp_path):
    base = cache_mod.fingerprint()
    assert cache_mod.fingerprint() == base
    with monkeypatch.context() as patch:
        patch.setattr(cache_mod, "_libcst_version", lambda: "other")
        assert cache_mod.fingerprint() != base
    assert cache_mod.fingerprint() == base
    package = pathlib.Path(cache_mod.__file__).parent.parent
    copy = tmp_path / "tf_grl_migrate"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_mod, "__file__", str(copy / "migrator" / "cache.py"))
    assert cache_mod.fingerprint() == base  # same bytes, same fingerprint
    for name in ("migrator/safety.py", "knowledge/_tf_renames.py", "knowledge/_tf_op_table.json",
                 "migrator/idioms/straight_through.py"):  # no hand list
        (copy / name).write_text((package / name).read_text() + "\n")
        assert cache_mod.fingerprint() != base
        (copy / name).write_text((package / name).read_text())
    (copy / "migrator" / "idioms" / "new_idiom.py").write_text("")
    assert cache_mod.fingerprint() != base
    (copy / "migrator" / "idioms" / "new_idiom.py").unlink()
    (copy / "new_module.py").write_text("")
    assert cache_mod.fingerprint() != base


def test_a_tree_without_candidates_never_touches_the_cache(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    assert run(tmp_path, "--check").exit_code == 0
    assert not pathlib.Path(cache_mod.default_dir()).exists() or entries() == []


def test_notebook_results_are_cached_too(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    source = (CASES / "rewrite" / "dann_builder_class" / "before.py").read_text()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source), nbformat.v4.new_markdown_cell("notes")]
    path = tmp_path / "dann.ipynb"
    nbformat.write(nb, str(path))
    first = run(path)
    assert "cell 1" in first.stdout
    _no_analysis(monkeypatch)
    assert run(path).stdout == first.stdout


def test_a_file_changed_moments_before_a_run_is_read_again_by_the_next(tmp_path, monkeypatch):
    """Within RACY_NS of a change a file may change again and keep its timestamps (a coarse
    clock): the quiet index does not vouch for it yet."""
    from tf_grl_migrate.migrator import files

    (tmp_path / "fresh.py").write_text("x = 1\n")
    assert run(tmp_path).exit_code == 0
    reads = []
    real_read = files.read
    monkeypatch.setattr(files, "read", lambda path: reads.append(path) or real_read(path))
    assert run(tmp_path).exit_code == 0
    assert [pathlib.Path(p).name for p in reads] == ["fresh.py"]


def test_a_warm_scan_reads_no_quiet_file_again_yet_sees_every_change(tmp_path, monkeypatch):
    """A file that held no override and no star-import is not read again while its mtime, ctime,
    size and inode agree; an edit moves its ctime (setting the mtime back does not hide it), and a
    file replaced by another of the same size and mtime is another inode: both are read again."""
    from tf_grl_migrate.migrator import files

    root = tmp_path / "tree"
    root.mkdir()
    quiet, replaced = root / "quiet.py", root / "replaced.py"
    quiet.write_text("x = 1\n")
    replaced.write_text("y = 2\n")
    monkeypatch.setattr(signatures, "RACY_NS", 0)  # the files were just written (see the test below)
    assert run(root).exit_code == 0
    time.sleep(0.05)  # a user's edit comes after the clock ticked past the run
    reads = []
    real_read = files.read
    monkeypatch.setattr(files, "read", lambda path: reads.append(path) or real_read(path))
    assert run(root).exit_code == 0 and reads == []  # answered from the index
    before = quiet.stat()
    override = (CASES / "rewrite" / "sign_straight_through" / "before.py").read_text()
    quiet.write_text(override)
    import os

    os.utime(quiet, ns=(before.st_atime_ns, before.st_mtime_ns))
    stamp = replaced.stat()
    fresh = root / "fresh.tmp"
    fresh.write_text("z = 3\n")  # the same size
    os.utime(fresh, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    os.replace(fresh, replaced)
    result = run(root, "--check")
    assert sorted(pathlib.Path(p).name for p in reads) == ["quiet.py", "replaced.py"]
    assert result.exit_code == 1 and "quiet.py" in result.output
