"""A repeated command answered from its record (rerun.py): the same output and status as a fresh
run, and a fresh run wherever anything the record rests on has changed."""

import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from tf_grl_migrate import __main__ as console
from tf_grl_migrate import api, rerun
from tf_grl_migrate.migrator import cache as cache_mod
from tf_grl_migrate.migrator import signatures

CASES = pathlib.Path(__file__).parent / "cases"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    shutil.copy(CASES / "rewrite" / "dann_builder_class" / "before.py", root / "flip_gradient.py")
    shutil.copy(CASES / "refuse" / "opaque_call_in_block" / "before.py", root / "sub" / "refused.py")
    (root / "sub" / "plain.py").write_text("x = 1\n")
    # the tree was just written: a record is kept only with the margin for coarse timestamps off
    monkeypatch.setattr(signatures, "RACY_NS", 0)
    monkeypatch.chdir(tmp_path)
    return root


def records():
    folder = pathlib.Path(cache_mod.default_dir()) / "runs"
    return sorted(folder.iterdir()) if folder.exists() else []


def console_run(capsys, *args):
    """The console script, in this process: (exit status, stdout, stderr)."""
    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["tf-grl-migrate", *map(str, args)]
    try:
        console.main()
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else 1
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return status, out, err


def no_run(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("the command ran although its record answers it")

    monkeypatch.setattr(api, "migrate_paths", boom)


def settle():
    """Let the clock move past the timestamps of what was just written (a coarse clock ticks every
    few milliseconds), as a user's edit after a run always is."""
    time.sleep(0.05)


@pytest.mark.parametrize("mode", [[], ["--check"], ["--format", "json"], ["--use-runtime"], ["-q", "-j", "1"],
                                  ["-j", "4096"]])
def test_a_repeated_command_prints_what_it_printed_and_exits_as_it_did(tree, capsys, monkeypatch, mode):
    first = console_run(capsys, "repo", *mode)
    assert first[0] == (1 if "--check" in mode else 0) and "flip_gradient.py" in first[1] + first[2]
    assert len(records()) == 1
    with monkeypatch.context() as patch:
        no_run(patch)
        assert console_run(capsys, "repo", *mode) == first


def test_a_tree_with_nothing_to_do_is_recorded_with_status_0(tree, capsys, monkeypatch):
    first = console_run(capsys, "--check", "repo/sub/plain.py")
    assert first[0] == 0 and len(records()) == 1
    no_run(monkeypatch)
    assert console_run(capsys, "--check", "repo/sub/plain.py") == first


def _edit(tree):
    (tree / "sub" / "refused.py").write_text("y = 2\n")


def _add(tree):
    shutil.copy(CASES / "rewrite" / "sign_straight_through" / "before.py", tree / "sub" / "added.py")


def _add_folder(tree):
    (tree / "sub" / "deeper").mkdir()
    shutil.copy(CASES / "rewrite" / "sign_straight_through" / "before.py", tree / "sub" / "deeper" / "added.py")


def _delete(tree):
    (tree / "flip_gradient.py").unlink()


def _same_size_same_mtime(tree):
    """Another text of the same size, its mtime set back: the ctime still moves."""
    target = tree / "sub" / "plain.py"
    stamp = target.stat()
    target.write_text("y = 2\n")
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))


def _replaced(tree):
    """Replaced by another file of the same size and mtime: another inode."""
    target = tree / "sub" / "plain.py"
    stamp = target.stat()
    fresh = tree / "fresh.tmp"
    fresh.write_text("z = 3\n")
    os.utime(fresh, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    os.replace(fresh, target)


@pytest.mark.parametrize("change", [_edit, _add, _add_folder, _delete, _same_size_same_mtime, _replaced])
def test_any_change_to_the_tree_runs_the_command_afresh(tree, capsys, change):
    from harness import cli

    console_run(capsys, "--check", "repo")
    settle()
    change(tree)
    again = console_run(capsys, "--check", "repo")
    fresh = cli("--check", "--no-cache", "repo")
    assert again[0] == fresh.exit_code
    assert again[2] == fresh.stderr


def test_a_change_to_the_tool_runs_the_command_afresh(tree, tmp_path, capsys, monkeypatch):
    module = tmp_path / "tool_module.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(rerun, "tool_files", lambda: [str(module)])
    first = console_run(capsys, "repo")
    settle()
    module.write_text("x = 2\n")
    ran = []
    real = api.migrate_paths
    monkeypatch.setattr(api, "migrate_paths", lambda *a, **k: ran.append(1) or real(*a, **k))
    assert console_run(capsys, "repo") == first and ran == [1]


def test_another_folder_or_other_arguments_are_other_commands(tree, tmp_path, capsys, monkeypatch):
    console_run(capsys, "--check", "repo")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "repo").mkdir(parents=True)
    (elsewhere / "repo" / "plain.py").write_text("x = 1\n")
    monkeypatch.chdir(elsewhere)
    status, _, err = console_run(capsys, "--check", "repo")
    assert status == 0 and "flip_gradient" not in err
    monkeypatch.chdir(tmp_path)
    _, _, err = console_run(capsys, "--check", "repo/sub")
    assert "flip_gradient" not in err and "refused.py" in err
    assert len(records()) == 3


@pytest.mark.parametrize("args", [["--write"], ["--no-cache"], ["--check", "--verify"]])
def test_runs_that_write_run_code_or_keep_nothing_keep_no_record(tree, capsys, args):
    (tree / "flip_gradient.py").unlink()
    (tree / "sub" / "refused.py").unlink()  # nothing to migrate: --verify runs nothing either
    status, _, _ = console_run(capsys, *args, "repo")
    assert status == 0 and records() == []


def test_stdin_usage_errors_and_failures_keep_no_record(tree, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x = 1\n")))
    assert console_run(capsys, "-")[0] == 0
    assert console_run(capsys, "--write", "--check", "repo")[0] == 2
    (tree / "broken.py").write_bytes(b"with g.gradient_override_map({}):\n    def f(:\n")
    assert console_run(capsys, "--check", "repo")[0] == 123
    assert records() == []


def test_where_a_write_need_not_move_the_ctime_nothing_is_vouched_for(tree, capsys, monkeypatch):
    """Windows' st_ctime is the creation time: neither a record nor the quiet index is kept there."""
    from tf_grl_migrate.migrator import files

    monkeypatch.setattr(signatures, "CTIME_MOVES", False)
    first = console_run(capsys, "--check", "repo")
    assert records() == []
    reads = []
    real_read = files.read
    monkeypatch.setattr(files, "read", lambda path: reads.append(path) or real_read(path))
    assert console_run(capsys, "--check", "repo") == first
    assert len(reads) == 3  # every file read again


def test_a_tree_written_moments_ago_keeps_no_record(tree, capsys, monkeypatch):
    """A file written within the margin may change again and keep its timestamps (coarse clocks):
    such a run is not recorded."""
    monkeypatch.setattr(signatures, "RACY_NS", 3_000_000_000)
    assert console_run(capsys, "--check", "repo")[0] == 1
    assert records() == []


@pytest.mark.parametrize("garbage", [b"", b"\x00\x01not marshal", "other shape", "not text"])
def test_an_unreadable_record_is_a_miss_and_is_replaced(tree, capsys, garbage):
    import marshal

    first = console_run(capsys, "--check", "repo")
    (record,) = records()
    if garbage == "other shape":
        record.write_bytes(marshal.dumps({"format": rerun.FORMAT, "argv": ["--check", "repo"]}))
    elif garbage == "not text":  # what it printed is no text: nothing of it is printed
        data = marshal.loads(record.read_bytes())
        record.write_bytes(marshal.dumps(data | {"chunks": [(True, "half"), (True, b"bytes")]}))
    else:
        record.write_bytes(garbage)
    assert console_run(capsys, "--check", "repo") == first
    assert console_run(capsys, "--check", "repo") == first and len(records()) == 1


def test_a_record_is_named_from_what_the_process_started_with(tree, capsys, monkeypatch):
    """An import during the run that extends sys.path does not hide the record from the replay,
    which looks before anything is imported."""
    real = api.migrate_paths
    path = list(sys.path)

    def extending(*args, **kwargs):
        sys.path.append("/somewhere/a/plugin/added")
        return real(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(api, "migrate_paths", extending)
        first = console_run(capsys, "--check", "repo")
    sys.path[:] = path
    no_run(monkeypatch)
    assert console_run(capsys, "--check", "repo") == first


def test_only_the_newest_records_are_kept(tree, capsys, monkeypatch):
    monkeypatch.setattr(rerun, "KEEP", 2)
    for path in ("repo", "repo/sub", "repo/flip_gradient.py"):
        console_run(capsys, "--check", path)
        settle()
    kept = records()
    assert len(kept) == 2
    assert rerun._where(["--check", "repo"]) not in map(str, kept)


def test_a_record_answers_without_importing_click(tree, tmp_path):
    code = (
        "import sys\n"
        "from tf_grl_migrate import __main__ as console\n"
        "from tf_grl_migrate.migrator import signatures\n"
        "signatures.RACY_NS = 0\n"
        "sys.argv = ['tf-grl-migrate', '--check', 'repo']\n"
        "try:\n    console.main()\nexcept SystemExit as stop:\n    status = stop.code\n"
        "print('imported:', sorted({'click', 'libcst'} & set(sys.modules)), status, file=sys.stderr)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    assert runs[0].stderr.endswith("imported: ['click'] 1\n"), runs[0].stderr  # libcst: in the workers
    assert runs[1].stderr.endswith("imported: [] 1\n"), runs[1].stderr
    assert runs[1].stdout == runs[0].stdout and runs[1].stderr == runs[0].stderr.replace("['click']", "[]")
