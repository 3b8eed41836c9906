"""Files are never corrupted: encodings, BOM, newlines, symlinks, modes, concurrent edits."""

import os
import pathlib
import stat
import sys

import pytest

from tf_grl_migrate import migrate_paths
from tf_grl_migrate.migrator.files import FileChangedError, process_file, write_atomic

DANN = pathlib.Path(__file__).parent / "cases" / "rewrite" / "dann_builder_class"
BEFORE = (DANN / "before.py").read_text()
AFTER = (DANN / "after.py").read_text()


def _roundtrip(tmp_path, data: bytes) -> bytes:
    path = tmp_path / "m.py"
    path.write_bytes(data)
    report = process_file(str(path), write=True)
    assert report.written and not report.diagnostics
    return path.read_bytes()


def test_crlf_newlines_are_kept(tmp_path):
    out = _roundtrip(tmp_path, BEFORE.replace("\n", "\r\n").encode())
    assert out == AFTER.replace("\n", "\r\n").encode()


def test_utf8_bom_is_kept(tmp_path):
    out = _roundtrip(tmp_path, b"\xef\xbb\xbf" + BEFORE.encode())
    assert out == b"\xef\xbb\xbf" + AFTER.encode()


def test_latin1_coding_cookie_is_kept(tmp_path):
    header = "# -*- coding: latin-1 -*-\n# Auteur: Fran\xe7ois\n"
    out = _roundtrip(tmp_path, (header + BEFORE).encode("latin-1"))
    assert out == (header + AFTER).encode("latin-1")


def test_write_goes_through_a_symlink_and_keeps_it(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(BEFORE)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert process_file(str(link), write=True).written
    assert link.is_symlink() and real.read_text() == AFTER


def test_mode_bits_are_kept(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BEFORE)
    path.chmod(0o751)
    process_file(str(path), write=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


def test_read_only_file_is_reported_not_written(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BEFORE)
    path.chmod(0o444)
    report = process_file(str(path), write=True)
    assert [d.code for d in report.diagnostics] == ["GRL905"] and not report.written
    assert path.read_text() == BEFORE


def test_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("changed meanwhile\n")
    with pytest.raises(FileChangedError):
        write_atomic(str(path), b"new\n", expected=b"old\n")
    assert path.read_text() == "changed meanwhile\n"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tf-grl-migrate-")]


def test_undecodable_file_is_a_failure(tmp_path):
    path = tmp_path / "bin.py"
    path.write_bytes(b"\x00\xff\xfe gradient_override_map \xff")
    report = process_file(str(path), write=True)
    assert report.failed and report.diagnostics[0].code in {"GRL901", "GRL902"}
    assert path.read_bytes() == b"\x00\xff\xfe gradient_override_map \xff"


OVERRIDE = 'with g.gradient_override_map({"Identity": "F"}):\n    y = tf.identity(x)\n'


@pytest.mark.parametrize(
    "data, where, message",
    [
        pytest.param(b"print 'hello'\n" + OVERRIDE.encode(), "1:1",
                     "Missing parentheses in call to 'print'", id="python2-print"),
        pytest.param(b"import tensorflow as tf\n<<<<<<< HEAD\n" + OVERRIDE.encode() + b"=======\ny = x\n>>>>>>> b\n",
                     "2:1", "invalid syntax", id="merge-conflict-markers"),
        pytest.param(b"x = 1\n" + OVERRIDE.encode() + b"z = b'\x00\x01'\x00\n", "4:7", "a NUL byte",
                     id="binary-nul-bytes"),
        pytest.param(b"def f(:\n    " + OVERRIDE.encode(), "1:7", "invalid syntax", id="broken-def"),
    ],
)
def test_unparsable_file_is_reported_where_python_puts_the_error(tmp_path, data, where, message):
    path = tmp_path / "old.py"
    path.write_bytes(data)
    report = process_file(str(path), write=True)
    (diag,) = report.diagnostics
    if sys.version_info < (3, 10) and message.startswith("Missing parentheses"):
        where = "1:7"  # Python 3.9's parser puts this error after the word `print`, as it is reported
    assert diag.code == "GRL902" and f"{diag.line}:{diag.col}" == where and message in diag.text
    assert path.read_bytes() == data and not report.written


def test_interrupt_during_write_leaves_the_original_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(BEFORE)

    def interrupted(fd):
        raise KeyboardInterrupt  # Ctrl-C after the temporary file was written, before the rename

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(path), AFTER.encode(), expected=BEFORE.encode())
    assert path.read_text() == BEFORE
    assert os.listdir(tmp_path) == ["m.py"]


def test_tab_indentation_is_kept(tmp_path):
    out = _roundtrip(tmp_path, BEFORE.replace("    ", "\t").encode())
    assert out == AFTER.replace("    ", "\t").encode()


def test_mixed_line_endings_outside_the_rewrite_are_kept(tmp_path):
    lines = BEFORE.splitlines(keepends=True)
    lines[-1] = lines[-1].replace("\n", "\r\n")  # the last line (untouched by the rewrite) ends in CRLF
    out = _roundtrip(tmp_path, "".join(lines).encode())
    assert out.endswith(b"flip_gradient = FlipGradientBuilder()\r\n")
    assert out.count(b"\r\n") == 1


@pytest.mark.parametrize("line, construct", [
    ('print "loss", loss', "a print statement"),
    ("exec code", "an exec statement"),
    ("x = 0777", "an octal literal"),
    ("if a <> b: pass", "the `<>` operator"),
    ("n = 10L", "a long integer literal"),
])
def test_a_python_2_file_is_named_so_with_how_to_convert_it(tmp_path, line, construct):
    path = tmp_path / "old.py"
    path.write_text("import tensorflow as tf\n\ng = tf.get_default_graph()\n"
                    "with g.gradient_override_map({'Sign': 'Identity'}):\n    y = tf.sign(x)\n" + line + "\n")
    [report] = migrate_paths([path], cache=False)
    [d] = report.diagnostics
    assert d.code == "GRL902" and d.line == 6
    assert f"this file is Python 2 ({construct}" in d.message and "python -m fissix -w FILE" in d.text


def test_a_python_3_syntax_error_gets_no_python_2_hint(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import tensorflow as tf\ng = tf.get_default_graph()\nwith g.gradient_override_map({}):\n"
                    "    y = (\n")
    [report] = migrate_paths([path], cache=False)
    assert report.diagnostics[0].code == "GRL902" and "Python 2" not in report.diagnostics[0].message


def test_the_api_returns_a_report_when_the_screen_breaks(tmp_path, monkeypatch):
    """migrate_source / migrate_paths never raise for a file: a bug in the cheap screen (before
    libcst) is a GRL903 of that file, as one in the analysis is."""
    from tf_grl_migrate import migrate_source
    from tf_grl_migrate.migrator import precheck

    def broken(text, *args):
        raise ValueError("screen bug")

    monkeypatch.setattr(precheck, "screen", broken)
    code = "g = tf.get_default_graph()\nwith g.gradient_override_map({'Sign': 'Identity'}):\n    y = tf.sign(x)\n"
    result = migrate_source(code)
    assert result.code == code and [d.code for d in result.diagnostics] == ["GRL903"]
    (tmp_path / "m.py").write_text(code)
    [report] = migrate_paths([tmp_path / "m.py"], cache=False, jobs=1)
    assert report.failed and "screen bug" in report.diagnostics[0].message


def test_a_file_over_the_size_limit_is_skipped_unread_and_the_rest_is_migrated(tmp_path):
    """A sparse terabyte-sized `huge.py` beside a legacy file (it ended a run in MemoryError)."""
    from tf_grl_migrate.migrator.files import MAX_FILE_BYTES

    huge = tmp_path / "huge.py"
    with open(huge, "wb") as handle:
        handle.truncate(1 << 40)  # sparse: no disk, no memory
    (tmp_path / "flip.py").write_text(BEFORE)
    reports = {pathlib.Path(r.path).name: r for r in migrate_paths([str(tmp_path)], write=True)}
    assert [d.code for d in reports["huge.py"].diagnostics] == ["GRL907"]
    assert f"{MAX_FILE_BYTES >> 20} MiB" in reports["huge.py"].diagnostics[0].message
    assert reports["huge.py"].failed and os.path.getsize(huge) == 1 << 40
    assert (tmp_path / "flip.py").read_text() == AFTER


def test_discover_lists_what_a_walk_and_isfile_would(tmp_path):
    """The scandir walk keeps os.walk's rules: a symlink to a file is listed, a symlinked folder is
    not entered, a FIFO or a dangling link named *.py is no module, excluded folders are pruned."""
    from tf_grl_migrate.migrator.files import discover

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "b.ipynb").write_text("{}")
    (tmp_path / "pkg" / "notes.txt").write_text("")
    (tmp_path / "pkg" / "link.py").symlink_to(tmp_path / "pkg" / "a.py")
    (tmp_path / "pkg" / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "pkg" / "linked_dir").symlink_to(tmp_path / "pkg" / "sub")
    os.mkfifo(tmp_path / "pkg" / "pipe.py")
    (tmp_path / "pkg" / "build").mkdir()
    (tmp_path / "pkg" / "build" / "c.py").write_text("")
    top = str(tmp_path / "pkg")
    assert discover([top]) == [f"{top}/a.py", f"{top}/link.py", f"{top}/sub/b.ipynb"]
    assert discover([top], extend_exclude=r"^/sub/") == [f"{top}/a.py", f"{top}/link.py"]
    assert f"{top}/build/c.py" in discover([top], exclude="^$")
