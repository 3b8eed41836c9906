"""Diagnostics, text and JSON reports, and the exit status (the codes: ``codes.py``)."""

from __future__ import annotations

from typing import NamedTuple

from .codes import CODES, FAILURE, NOTE, REFUSAL, TABLE, say

EXIT_OK = 0
EXIT_WOULD_CHANGE = 1
EXIT_USAGE = 2
EXIT_FAILED = 123


# NamedTuple and a slotted class rather than dataclasses: this module is on every run's start-up
# path, where the dataclasses import and code generation cost a few percent of a whole-tree run.
class _Fields(NamedTuple):
    line: int
    col: int  # 1-based
    code: str
    message: str  # one sentence: what is wrong here and the one thing to do
    cell: int | None = None  # notebook cell index (1-based), if any
    details: str | None = None  # the rest: why, the recipe, the runtime option (JSON; --explain says more)
    hints: tuple[str, ...] = ()  # short clauses shown after the message, each in parentheses: what else would work


class Diagnostic(_Fields):
    """Immutable, ordered by (line, col, code, message, cell, details, hints). Its code is one of the
    table's (``codes.CODES``): a code that is not there cannot be emitted. What it says comes from
    the table too (``said``: the code's message template, filled)."""

    __slots__ = ()

    def __new__(cls, line: int, col: int, code: str, message: str, cell: int | None = None,
                details: str | None = None, hints: tuple[str, ...] = ()) -> Diagnostic:
        if code not in CODES:
            raise ValueError(f"{code!r} is not in tf_grl_migrate.codes.CODES; add it there "
                             "(with its row in docs/idioms.md)")
        return super().__new__(cls, line, col, code, message, cell, details or None, tuple(hints))

    @classmethod
    def at(cls, position: tuple[int, int], code: str, message: str, cell: int | None = None,
           details: str | None = None, hints: tuple[str, ...] = ()) -> Diagnostic:
        """The diagnostic at ``position``, (line, column)."""
        return cls(position[0], position[1], code, message, cell, details, hints)

    @classmethod
    def said(cls, position: tuple[int, int], code: str, key: str, /, *, cell: int | None = None,
             hints: tuple[str, ...] = (), **fields: object) -> Diagnostic:
        """The diagnostic at ``position`` that says ``code``'s message ``key`` (codes.TABLE) over ``fields``."""
        message, details = say(code, key, **fields)
        return cls.at(position, code, message, cell, details or None, hints)

    @property
    def sentence(self) -> str:
        """What the one line says: the message, then each hint in parentheses."""
        return self.message + "".join(f" ({hint})" for hint in self.hints)

    @property
    def text(self) -> str:
        """The message, its hints and its details, as one text."""
        return f"{self.sentence} {self.details}" if self.details else self.sentence

    @property
    def severity(self) -> str:
        """"error" or "note", as the table of codes says."""
        return TABLE[self.code].severity

    @property
    def is_refusal(self) -> bool:
        """A site the tool left unchanged."""
        return TABLE[self.code].kind is REFUSAL

    @property
    def is_note(self) -> bool:
        """A note on a migrated file (nothing refused)."""
        return TABLE[self.code].kind is NOTE

    @property
    def is_failure(self) -> bool:
        """A file-level failure: the file could not be processed at all."""
        return TABLE[self.code].kind is FAILURE

    def format(self, path: str) -> str:
        where = f"{path}:cell {self.cell}:" if self.cell is not None else f"{path}:"
        return f"{where}{self.line}:{self.col}: {self.code} {self.sentence}"

    def to_json(self) -> dict:
        data = self._asdict()
        data["hints"] = list(self.hints)
        data["severity"] = self.severity
        if self.cell is None:
            del data["cell"]
        return data


class FileReport:
    """What happened to one file: changed, its diagnostics, the dry-run diff, whether written, and
    (``--verify``) each migrated site's verification. ``new_text`` and ``source`` carry the migrated
    text of a changed file and the bytes it was migrated from, from the worker that computed it to
    verification (which verifies and writes exactly that pair); they are no part of the report."""

    __slots__ = ("path", "changed", "diagnostics", "diff", "written", "verification", "new_text", "source")
    _COMPARED = __slots__[:-2]

    def __init__(self, path: str, changed: bool = False, diagnostics: list[Diagnostic] | None = None,
                 diff: str = "", written: bool = False, verification: list | None = None):
        self.path = path
        self.changed = changed
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.diff = diff
        self.written = written
        self.verification = [] if verification is None else verification
        self.new_text: str | None = None
        self.source: bytes | None = None

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self._COMPARED)

    def __eq__(self, other: object) -> bool:
        return type(other) is FileReport and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # equal by value, so not hashable (as a dataclass with eq)

    def __repr__(self) -> str:
        return "FileReport(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._COMPARED, self._fields())) + ")"

    @property
    def differs(self) -> bool:
        """A migrated site whose TF2 result is not TF1's (``--verify``)."""
        return any(v.status == "differs" for v in self.verification)

    @property
    def failed(self) -> bool:
        return any(d.is_failure for d in self.diagnostics)

    @property
    def refused(self) -> bool:
        return any(d.is_refusal for d in self.diagnostics)


def totals(reports: list[FileReport], verified: bool = False) -> dict:
    out = {
        "files": len(reports),
        "changed": sum(r.changed for r in reports),
        "refused": sum(d.is_refusal for r in reports for d in r.diagnostics),
        "failed": sum(r.failed for r in reports),
    }
    if verified:
        for status in ("verified", "differs", "not_verifiable"):
            out[status] = sum(v.status == status for r in reports for v in r.verification)
    return out


def verification_summary(totals_: dict) -> str:
    """``N sites verified, M differ, K not verifiable`` from ``totals(..., verified=True)``."""
    n = totals_["verified"]
    return (f"{n} site{'s' if n != 1 else ''} verified, {totals_['differs']} differ, "
            f"{totals_['not_verifiable']} not verifiable")


def summary_line(reports: list[FileReport], write: bool, verified: bool = False) -> str:
    t = totals(reports, verified)
    refused, failed = t["refused"], t["failed"]
    # with --write, a file counts as migrated once it is on disk (a read-only one fails with GRL905)
    changed = sum(r.written for r in reports) if write else t["changed"]
    verb = "migrated" if write else "would migrate"
    parts = [f"{changed} file{'s' if changed != 1 else ''} {verb}"]
    parts.append(f"{refused} site{'s' if refused != 1 else ''} refused")
    parts.append(f"{failed} file{'s' if failed != 1 else ''} failed")
    parts.append(f"{len(reports)} checked")
    line = ", ".join(parts)
    return f"{line}; {verification_summary(t)}" if verified else line


def exit_status(reports: list[FileReport], check: bool, write: bool = False) -> int:
    """123 a file failed; 1 ``--check`` found work, ``--write`` left an override the user must
    migrate (as ``ruff check --fix`` exits 1 for what it could not fix), or ``--verify`` found a
    site that differs; else 0."""
    if any(r.failed for r in reports):
        return EXIT_FAILED
    if any(r.differs for r in reports):  # --verify: a migration that is not TF1's
        return EXIT_WOULD_CHANGE
    if check and any(r.changed or r.refused for r in reports):
        return EXIT_WOULD_CHANGE
    if write and any(r.refused for r in reports):
        return EXIT_WOULD_CHANGE
    return EXIT_OK


def to_json(reports: list[FileReport], write: bool, verified: bool = False, isolation: str | None = None) -> str:
    """The JSON report; with ``verified``, ``isolation`` says where verification's workers ran with
    less isolation than documented (null where they had all of it)."""
    files = []
    for r in reports:
        entry = {
            "path": r.path,
            "changed": r.changed,
            "written": r.written,
            "diagnostics": [d.to_json() for d in sorted(r.diagnostics)],
        }
        if verified:
            entry["verification"] = [v.to_json() for v in r.verification]
        files.append(entry)
    import json

    data = {"files": files, "totals": totals(reports, verified), "write": write}
    if verified:
        data["isolation"] = isolation
    return json.dumps(data, indent=2)
