"""A repeated command answered from its record, before click or libcst is imported.

A run of ``--check`` or the dry-run diff that the console script started keeps a record: what
it printed (stdout and stderr, in order), its exit status, and the signature (mtime, ctime,
size, inode) of every folder it listed and every file it read, and of the tool's own files. The
same command, in the same folder, with the same interpreter, prints that record again when
every signature still agrees; one that does not, or a record that cannot be read, sends the run
to the command line as if there were none. Why it is built so: docs/design.md, "rerun.py".
"""

from __future__ import annotations

import os
import sys
import time

from .migrator.cache import default_dir, new_hash, tool_files
from .migrator.signatures import settled, signature

TYPE_CHECKING = False  # typing's own import costs ~2 ms of a run this module answers in ~10
if TYPE_CHECKING:
    from collections.abc import Iterable

FORMAT = 2  # 2: each input as [path, signature]
KEEP = 64  # records kept; the oldest go first


def _where(argv: list[str]) -> str:
    """The record's file for this command: argv, the folder and the interpreter, hashed."""
    what = repr((FORMAT, argv, os.getcwd(), sys.executable, sys.version, sys.path, os.cpu_count(), __file__))
    return os.path.join(default_dir(), "runs", new_hash(what.encode("utf-8", "surrogateescape")).hexdigest() + ".rec")


def replay(argv: list[str]) -> int | None:
    """Print what the same command printed last time and return its exit status; None where the
    command must run (no record, or anything it rests on has changed)."""
    import marshal  # built in: no import cost, and twice as fast to load as JSON

    try:
        with open(_where(argv), "rb") as handle:
            record = marshal.loads(handle.read())
        if record["format"] != FORMAT or record["argv"] != argv or record["cwd"] != os.getcwd():
            return None
        for path, found in record["inputs"]:
            if signature(path) != found:
                return None
        chunks, status = record["chunks"], int(record["status"])
        if not all(text.__class__ is str for _, text in chunks):
            return None
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        return None
    for to_stderr, text in chunks:
        (sys.stderr if to_stderr else sys.stdout).write(text)
    return status


class Recorder:
    """Made by the console script for a run it hands to the command line, which gives it what
    the run printed and what it rests on (``keep``) when the run is one a record can answer."""

    def __init__(self, argv: list[str]):
        self.argv = list(argv)
        try:  # named as the replay will look for it: from what this process started with
            self.where: str | None = _where(self.argv)
        except OSError:  # the working folder is gone
            self.where = None
        # a file written after this (the tool's own too, while it runs) is too fresh to be kept
        self.started = time.time_ns()

    def keep(self, chunks: Iterable[tuple[bool, str]], status: int, inputs: dict[str, list[int] | None]) -> None:
        """Store the record. ``inputs``: path -> signature of every folder listed and file read,
        taken before it was read (None: the run could not take one). Nothing is stored where a
        signature is missing or too fresh to be trusted; a failure here only costs speed (the
        run has printed all it had to)."""
        import marshal

        from .migrator.files import replace_atomically

        found: dict[str, list[int]] = {}
        try:
            for path in tool_files():
                found[path] = signature(path)
            for path, sig in inputs.items():
                if sig is None:
                    return
                found[path] = sig
            if self.where is None or not all(settled(sig, self.started) for sig in found.values()):
                return  # a file changed moments before the run may change again unseen
            record = {"format": FORMAT, "argv": self.argv, "cwd": os.getcwd(),
                      "inputs": list(found.items()),
                      "chunks": list(chunks), "status": status}
            os.makedirs(os.path.dirname(self.where), exist_ok=True)
            replace_atomically(self.where, marshal.dumps(record))
            _prune(os.path.dirname(self.where))
        except (OSError, ValueError):  # the tool's files, the folder, a read-only or full disk
            pass


def _prune(folder: str) -> None:
    """Keep the KEEP newest records."""
    entries = sorted(os.scandir(folder), key=lambda e: e.stat().st_mtime_ns, reverse=True)
    for entry in entries[KEEP:]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
