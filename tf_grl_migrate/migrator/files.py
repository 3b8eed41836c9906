"""Everything that knows files: discovery, excludes, decoding, diffs and atomic writes."""

from __future__ import annotations

import ast
import errno
import os
import re
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol

from ..report import Diagnostic, FileReport
from . import precheck
from .signatures import signature_or_none

if TYPE_CHECKING:
    import libcst

    from .facts import Links

SUFFIXES = (".py", ".ipynb")

DEFAULT_EXCLUDES = (
    r"/(\.git|\.hg|\.svn|\.venv|venv|\.tox|\.nox|\.eggs|build|dist|__pycache__|site-packages|node_modules)/"
)


def discover(paths: Iterable[str], exclude: str | None = None, extend_exclude: str | None = None,
             folders: dict[str, list[int] | None] | None = None) -> list[str]:
    """Files to process, sorted. Directories are walked for ``.py`` and ``.ipynb``; named files are
    always kept. ``folders``, where given, gets each folder listed: its absolute path -> its
    signature (signatures.py) taken before it was listed, or None."""
    pattern = re.compile(exclude if exclude is not None else DEFAULT_EXCLUDES)
    extra = re.compile(extend_exclude) if extend_exclude else None
    # the default pattern only names directories (already pruned below), so files need no check
    check_files = exclude is not None or extra is not None
    found: set[str] = set()
    for raw in paths:
        if os.path.isdir(raw):
            _walk(os.path.join(raw, ""), pattern, extra, check_files, found, folders)
        else:
            found.add(str(raw))
    return sorted(found)


def _walk(top: str, pattern: re.Pattern[str], extra: re.Pattern[str] | None, check_files: bool,
          found: set[str], folders: dict[str, list[int] | None] | None) -> None:
    """Add the ``.py``/``.ipynb`` files under ``top`` to ``found``, by os.walk's rules (a symlinked
    folder is listed, not entered) with each file's type from the listing: a regular file costs
    no stat (a symlink is followed, as os.path.isfile would)."""
    stack = [(top, "/")]  # (folder, its path from the top: "/" or "/a/b/")
    while stack:
        root, rel_root = stack.pop()
        if folders is not None:
            folders[os.path.abspath(root)] = signature_or_none(root)
        try:
            entries = os.scandir(root)
        except OSError:  # gone, or not readable: os.walk passes over it too
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if _is(entry.is_dir):
                    if not entry.is_symlink() and not _excluded(f"{rel_root}{name}/", pattern, extra):
                        stack.append((entry.path, f"{rel_root}{name}/"))
                elif (name.endswith(SUFFIXES) and not (check_files and _excluded(f"{rel_root}{name}", pattern, extra))
                      and _is(entry.is_file)):  # a FIFO or a device named *.py is no module (and would block)
                    found.add(entry.path)


def _is(test: Callable[[], bool]) -> bool:
    """A listing entry's ``is_dir``/``is_file``: False where it cannot say (the entry went meanwhile)."""
    try:
        return test()
    except OSError:
        return False


def _excluded(rel: str, pattern: re.Pattern[str], extra: re.Pattern[str] | None) -> bool:
    return bool(pattern.search(rel) or (extra is not None and extra.search(rel)))


class Source(NamedTuple):
    text: str
    encoding: str


def decode(raw: bytes) -> Source:
    """Decode as Python does (PEP 263 cookie, UTF-8 BOM), keeping every newline as it is. Raises
    one of DECODE_ERRORS where the bytes are not text Python reads."""
    import io
    import tokenize  # this and the other imports inside functions: only files that need them pay

    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return Source(raw.decode(encoding), encoding)


DECODE_ERRORS = (SyntaxError, UnicodeDecodeError, LookupError)  # what decode raises (a bad cookie, bad bytes)


def cannot_decode(path: str, exc: BaseException) -> FileReport:
    """The report of a file whose bytes cannot be decoded (GRL901), left as it is."""
    return FileReport(path, diagnostics=[Diagnostic.said((1, 1), "GRL901", "cannot_decode", error=exc)])


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    path = diff_path(path)
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )


def diff_path(path: str) -> str:
    """The path a diff header names: normalised (``./a/../b.py`` -> ``b.py``) and, when it lies
    under the working directory, relative to it, so ``tf-grl-migrate . | git apply`` works."""
    path = os.path.normpath(path)
    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive (Windows)
            relative = ".."
        if not relative.startswith(".."):
            path = relative
    return path.replace(os.sep, "/")


class Cache(Protocol):
    """What the migration asks of a result cache (``migrator.cache.Cache`` is the one)."""

    def key(self, data: bytes, use_runtime: bool, kind: str) -> str: ...
    def get(self, key: str) -> tuple[str | None, list[Diagnostic]] | None: ...
    def put(self, key: str, text: str, new_text: str, diagnostics: list[Diagnostic]) -> None: ...


class NotCached(Exception):
    """Raised by ``migrate_text(..., compute=False)`` when the cache holds no result."""


def migrate_text(path: str, text: str, use_runtime: bool = False, cache: Cache | None = None,
                 compute: bool = True) -> tuple[str, FileReport]:
    """Migrate one module's text; never raises (but :class:`NotCached` when asked not to compute):
    failures become 9xx diagnostics. With a :class:`~tf_grl_migrate.migrator.cache.Cache`, a text seen
    before is answered from it."""
    key, hit = _look_up(cache, text.encode("utf-8", "surrogatepass"), use_runtime, "text")
    if hit is not None:
        new_text, diagnostics = hit
        new_text = text if new_text is None else new_text
        return new_text, FileReport(path, diagnostics=diagnostics, changed=new_text != text)
    return _compute(path, text, use_runtime, cache, key, compute)


def _look_up(cache: Cache | None, data: bytes, use_runtime: bool,
             kind: str) -> tuple[str | None, tuple[str | None, list[Diagnostic]] | None]:
    """(key, (new_text | None, diagnostics) | None); (None, None) without a cache."""
    if cache is None:
        return None, None
    key = cache.key(data, use_runtime, kind)
    return key, cache.get(key)


def _compute(path: str, text: str, use_runtime: bool, cache: Cache | None, key: str | None, compute: bool,
             links: Links | None = None, blocked: dict | None = None) -> tuple[str, FileReport]:
    """Migrate a text the cache did not know, and remember the result."""
    if not compute:
        raise NotCached
    new_text, report = _migrate_text(path, text, use_runtime, links, blocked)
    kept = not any(d.code == "GRL903" for d in report.diagnostics)  # our bugs are not kept
    if cache is not None and key is not None and kept:
        cache.put(key, text, new_text, report.diagnostics)
    return new_text, report


def _our_failure(exc: Exception) -> Diagnostic:
    """GRL903 for an exception of the tool's own: a module nested too deeply for it, or a bug."""
    if isinstance(exc, RecursionError):
        return Diagnostic.said((1, 1), "GRL903", "too_deep")
    return Diagnostic.said((1, 1), "GRL903", "internal", kind=type(exc).__name__, error=exc)


def _migrate_text(path: str, text: str, use_runtime: bool, links: Links | None = None,
                  blocked: dict | None = None) -> tuple[str, FileReport]:
    report = FileReport(path)
    tree = None
    try:
        # the screen finds nothing to change: no name of a star-imported module is removed either
        screened, tree = precheck.screen(text) if links is None or links.only_star_imported else (None, None)
    except Exception as exc:  # noqa: BLE001 - a bug of ours in the screen must not stop the other files either
        screened = [_our_failure(exc)]
    if screened is not None:  # nothing to do, found without libcst (imported only for files that need it)
        report.diagnostics.extend(screened)
        return text, report
    import libcst as cst

    from .codemod import SafetyError, migrate_code

    try:
        result = migrate_code(text, use_runtime, screen=False, links=links, tree=tree)  # screened just above
    except cst.ParserSyntaxError as exc:
        report.diagnostics.append(_parse_failure(text, exc))
        return text, report
    except SafetyError as exc:
        report.diagnostics.append(Diagnostic.said((1, 1), "GRL904", "unsafe", reason=exc))
        return text, report
    except Exception as exc:  # noqa: BLE001 - a bug of ours must not stop the other files
        report.diagnostics.append(_our_failure(exc))
        return text, report
    report.diagnostics.extend(result.diagnostics)
    report.changed = result.code != text
    if blocked is not None:
        blocked.update(result.blocked)
    return result.code, report


def _parse_failure(text: str, exc: libcst.ParserSyntaxError) -> Diagnostic:
    """GRL902 where Python's own parser puts the error, with its message ("Missing parentheses in
    call to 'print'" says more than libcst's token list, and libcst's native parser can point a line
    or two off). libcst's account only when Python parses the text and libcst does not."""
    import ast

    if "\0" in text:  # Python's parser names no position for NUL bytes
        before = text[: text.index("\0")]
        col = len(before) - (before.rfind("\n") + 1) + 1
        return Diagnostic.said((before.count("\n") + 1, col), "GRL902", "nul_byte")
    try:
        ast.parse(text)
    except SyntaxError as err:
        if err.lineno:
            where, what = (err.lineno, max(err.offset or 1, 1)), python2_construct(err)
            if what is None:
                return Diagnostic.said(where, "GRL902", "cannot_parse", error=err.msg)
            return Diagnostic.said(where, "GRL902", "python2", what=what, line=err.lineno, error=err.msg)
    except (ValueError, RecursionError, MemoryError):
        pass
    return Diagnostic.said((exc.raw_line, exc.raw_column + 1), "GRL902", "cannot_parse", error=exc.message)


# What Python 3's parser says of Python 2 code, and what the construct is.
_PYTHON2_MESSAGES = (
    ("Missing parentheses in call to 'print'", "a print statement"),
    ("Missing parentheses in call to 'exec'", "an exec statement"),
    ("multiple exception types must be parenthesized", "`except E, name:`"),
    ("leading zeros in decimal integer literals", "an octal literal such as 0777"),
)
_PYTHON2_TEXT = (
    (re.compile(r"<>"), "the `<>` operator"),
    (re.compile(r"`[^`]*`"), "backquotes for repr"),
    (re.compile(r"\b\d+[lL]\b"), "a long integer literal such as 10L"),
    (re.compile(r"\b[uU][rR]['\"]"), "a ur'' string"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "`raise E, message`"),
)


def python2_construct(err: SyntaxError) -> str | None:
    """The Python 2 construct a parse failure is (the migrator reads Python 3 only), or None."""
    what = next((w for m, w in _PYTHON2_MESSAGES if m in (err.msg or "")), None)
    if what is None and err.text:
        what = next((w for pattern, w in _PYTHON2_TEXT if pattern.search(err.text)), None)
    return what


MAX_FILE_BYTES = 64 << 20  # a larger file is skipped (GRL907): no source or notebook of ours is near it


class TooLarge(OSError):
    """A file over :data:`MAX_FILE_BYTES`, left unread."""


def read_bytes(path: str) -> bytes:
    """A file's bytes with os-level reads: a third cheaper than open().read() on thousands of small
    files. Only a regular file is read (a FIFO named on the command line would block the run), and
    only up to :data:`MAX_FILE_BYTES` (a sparse terabyte beside the code would exhaust memory)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise TooLarge(errno.EFBIG, f"{info.st_size} bytes")
        chunks = [os.read(fd, info.st_size + 1)]
        size = len(chunks[0])
        while chunks[-1]:
            if size > MAX_FILE_BYTES:  # grew while read
                raise TooLarge(errno.EFBIG, f"over {size} bytes")
            chunks.append(os.read(fd, 1 << 20))
            size += len(chunks[-1])
    finally:
        os.close(fd)
    return b"".join(chunks)


def read(path: str) -> tuple[Any, FileReport | None]:  # (bytes, None) or (None, the failure)
    """(raw bytes, None) or (None, a failure report)."""
    try:
        return read_bytes(path), None
    except TooLarge as exc:
        return None, FileReport(path, diagnostics=[Diagnostic.said((1, 1), "GRL907", "too_large", error=exc.strerror,
                                                                   limit=MAX_FILE_BYTES >> 20)])
    except OSError as exc:
        failed = Diagnostic.said((1, 1), "GRL901", "cannot_read", error=exc.strerror or exc)
        return None, FileReport(path, diagnostics=[failed])


def process_file(path: str, write: bool, want_diff: bool = True, use_runtime: bool = False,
                 raw: bytes | None = None, cache: Cache | None = None, compute: bool = True, links: Links | None = None,
                 blocked: dict | None = None, keep_text: bool = False) -> FileReport:
    """Read (unless ``raw`` is given), migrate and, with ``write``, write one file. With a
    ``cache`` a file's bytes seen before are answered from it (without decoding them when only the
    verdict is wanted, as in ``--check``); ``compute=False`` raises :class:`NotCached` on a miss.
    ``links``: the module's links to other modules of the run (facts.Links; cached only where the
    module is merely star-imported, under a key of its own);
    ``blocked`` collects the ones it cannot keep its end of. ``keep_text``: a changed file's report
    carries the migrated text (``new_text``; the glued cells for a notebook) and the bytes it was
    migrated from (``source``), for verification."""
    if raw is None:
        raw, failure = read(path)
        if failure:
            return failure
    if links is not None and not links.only_star_imported:
        cache = None  # linked to other modules: a question of the run, never cached
    elif not precheck.may_hold_override_bytes(raw):
        return FileReport(path)
    if path.endswith(".ipynb"):
        return _process_notebook(path, raw, write, want_diff, use_runtime, cache, compute, keep_text)
    key, hit = _look_up(cache, raw, use_runtime, "py" if links is None else "py-star-imported")
    if hit is not None and (hit[0] is None or not (want_diff or write or keep_text)):  # the verdict is all we need
        return FileReport(path, diagnostics=hit[1], changed=hit[0] is not None)
    try:
        source = decode(raw)
    except DECODE_ERRORS as exc:
        return cannot_decode(path, exc)
    if hit is not None and hit[0] is not None:  # (a hit of an unchanged file was answered above)
        new_text, report = hit[0], FileReport(path, diagnostics=hit[1], changed=hit[0] != source.text)
    else:
        new_text, report = _compute(path, source.text, use_runtime, cache, key, compute, links, blocked)
    if report.changed:
        if keep_text:
            report.new_text, report.source = new_text, raw
        if want_diff:
            report.diff = unified_diff(path, source.text, new_text)
        if write:
            _write(report, path, new_text.encode(source.encoding), raw)
    return report


def _write(report: FileReport, path: str, data: bytes, raw: bytes) -> None:
    try:
        write_atomic(path, data, expected=raw)
        report.written = True
    except (OSError, UnicodeEncodeError, FileChangedError) as exc:
        report.diagnostics.append(Diagnostic.said((1, 1), "GRL905", "cannot_write", error=exc))


def _process_notebook(path: str, raw: bytes, write: bool, want_diff: bool, use_runtime: bool, cache: Cache | None,
                      compute: bool, keep_text: bool = False) -> FileReport:
    from . import notebooks

    report = FileReport(path)
    try:
        text = raw.decode("utf-8")
        nb = notebooks.load(text)
    except (UnicodeDecodeError, notebooks.NotebookError) as exc:
        script = isinstance(exc, notebooks.NotebookError) and _is_python(text)
        report.diagnostics.append(Diagnostic.said((1, 1), "GRL901", "script_notebook") if script else
                                  Diagnostic.said((1, 1), "GRL901", "notebook", error=exc))
        return report
    glued, indices, skipped, magics = notebooks.glue(nb)
    report.diagnostics.extend(skipped)
    if not indices:
        return report
    new_glued, inner = migrate_text(path, glued, use_runtime, cache, compute)
    for d in inner.diagnostics:
        cell, line = notebooks.cell_of_line(glued, indices, d.line)
        report.diagnostics.append(d._replace(line=line, cell=cell))
    if not inner.changed or inner.failed:
        return report
    try:
        dumps = notebooks.writer(nb, text)
        changed = notebooks.split(nb, new_glued, indices, magics)
        before = {i: notebooks.cell_source(nb["cells"][i]) for i in changed}
        for index, source in changed.items():
            notebooks.set_source(nb["cells"][index], source)
        data = dumps(nb).encode("utf-8")
    except notebooks.NotebookError as exc:
        report.diagnostics.append(Diagnostic.said((1, 1), "GRL906", "not_exact", reason=exc))
        return report
    report.changed = bool(changed)
    if keep_text and changed:
        report.new_text, report.source = new_glued, raw
    if want_diff:
        report.diff = "".join(unified_diff(f"{path}:cell {i + 1}", before[i], changed[i]) for i in sorted(changed))
    if write and changed:
        _write(report, path, data, raw)
    return report


_CELL_MARK = re.compile(r"^# In\[[ \d]*\]:[ \t]*$", re.MULTILINE)  # a cell of `jupyter nbconvert --to script`


def _is_python(text: str) -> bool:
    """Whether a text that is no JSON object is Python source: ``jupyter nbconvert --to script``'s
    output (its ``# In[3]:`` lines), or a text that parses as Python."""
    if text.lstrip().startswith("{"):
        return False
    if _CELL_MARK.search(text):
        return True
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


class FileChangedError(Exception):
    pass


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Write beside the target then rename over it: a reader (or Ctrl-C) never sees half a file.

    Writes through a symlink to its target (the link stays a link), keeps the mode bits, and
    refuses to overwrite a file that changed on disk since it was read.
    """
    target = os.path.realpath(path)
    if expected is not None and read_bytes(target) != expected:
        raise FileChangedError("file changed on disk since it was read; not overwritten")
    mode = stat.S_IMODE(os.stat(target).st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise PermissionError(f"file is read-only: {path}")
    replace_atomically(target, data, mode=mode, durable=True)


def replace_atomically(target: str, data: bytes, mode: int | None = None, durable: bool = False) -> None:
    """Write a temporary file beside ``target``, then rename it over ``target``; on any failure
    (Ctrl-C included) the temporary file is removed and ``target`` is as it was. ``durable``
    fsyncs before the rename (a user's file; the result cache does without)."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".tf-grl-migrate-", suffix=".tmp", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# -- what verification reads and writes (tf_grl_migrate.api's --verify and --verify-against) --
def text_of(path: str, raw: bytes) -> tuple[str, Callable[[Diagnostic], Diagnostic]]:
    """(the text a file's code is, how a diagnostic of that text is placed): a module's decoded
    text as it stands; a notebook's code cells glued, a diagnostic then naming its cell."""
    if not path.endswith(".ipynb"):
        return decode(raw).text, lambda d: d
    from . import notebooks

    glued, indices, _, _ = notebooks.glue(notebooks.load(raw.decode("utf-8")))

    def place(d: Diagnostic) -> Diagnostic:
        cell, line = notebooks.cell_of_line(glued, indices, d.line)
        return d._replace(line=line, cell=cell)

    return glued, place


def write_verified(report: FileReport, raw: bytes, use_runtime: bool) -> None:
    """Write a file verification passed: its migrated text (``report.new_text``), only if the
    file still holds ``raw``; a notebook's cells through the notebook layer (the same result)."""
    if report.path.endswith(".ipynb"):
        again = process_file(report.path, True, False, use_runtime, raw)
        report.written = again.written
        report.diagnostics.extend(d for d in again.diagnostics if d.code in ("GRL905", "GRL906"))
        return
    try:
        write_atomic(report.path, (report.new_text or "").encode(decode(raw).encoding), expected=raw)
        report.written = True
    except (OSError, UnicodeEncodeError, FileChangedError) as exc:
        report.diagnostics.append(Diagnostic.said((1, 1), "GRL905", "cannot_write", error=exc))
