"""Diagnostics, their stable codes, text and JSON reports, and the exit status."""

from __future__ import annotations

from typing import NamedTuple

# Stable codes. 1xx: an override the tool refused to migrate (site left unchanged).
# 2xx: a note on a file the tool migrated (nothing refused; --check does not fail for it).
# 9xx: a file the tool could not process (file left unchanged).
CODES = {
    "GRL101": "override block calls code the tool cannot see into",
    "GRL102": "override target cannot be matched to a gradient registration",
    "GRL103": "gradient function uses op features tf.custom_gradient cannot supply",
    "GRL104": "op type not in the op table",
    "GRL105": "override map is not a literal dict",
    "GRL106": "gradient registration cannot be converted",
    "GRL107": "registration not visible where it is used",
    "GRL108": "overridden op created in a form the tool cannot rewrite",
    "GRL109": "override target is a built-in gradient other than Identity",
    "GRL110": "another use of the same registration could not be migrated",
    "GRL111": "gradient_override_map used outside a with statement",
    "GRL112": "notebook cell that is not Python (%%bash, ...) or does not parse holds an override",
    "GRL113": "gradient_override_map that is not provably tf.Graph's (a wrapper, or an unresolved receiver)",
    "GRL114": "gradient code the rewrite would move uses a TensorFlow name TF2 does not have",
    "GRL201": "note: the migrated file imports keras.engine, which Keras 3 removed",
    "GRL901": "cannot read or decode file",
    "GRL902": "cannot parse file",
    "GRL903": "internal error while transforming file",
    "GRL904": "rewrite failed the safety check",
    "GRL905": "cannot write file",
    "GRL906": "notebook cannot be written back exactly",
}

EXIT_OK = 0
EXIT_WOULD_CHANGE = 1
EXIT_USAGE = 2
EXIT_FAILED = 123


# NamedTuple and a slotted class rather than dataclasses: this module is on every run's start-up
# path, where the dataclasses import and code generation cost a few percent of a whole-tree run.
class Diagnostic(NamedTuple):
    """Immutable, ordered by (line, col, code, message, cell)."""

    line: int
    col: int  # 1-based
    code: str
    message: str
    cell: int | None = None  # notebook cell index (1-based), if any

    @property
    def severity(self) -> str:
        return "note" if self.code.startswith("GRL2") else "error"

    @property
    def is_refusal(self) -> bool:
        """A site the tool left unchanged (1xx)."""
        return self.code.startswith("GRL1")

    @property
    def is_failure(self) -> bool:
        """A file-level failure (9xx): the file could not be processed at all."""
        return self.code.startswith("GRL9")

    def format(self, path: str) -> str:
        where = f"{path}:cell {self.cell}:" if self.cell is not None else f"{path}:"
        return f"{where}{self.line}:{self.col}: {self.code} {self.message}"

    def to_json(self) -> dict:
        data = self._asdict()
        data["severity"] = self.severity
        if self.cell is None:
            del data["cell"]
        return data


class FileReport:
    """What happened to one file: changed, its diagnostics, the dry-run diff, whether written."""

    __slots__ = ("path", "changed", "diagnostics", "diff", "written")

    def __init__(self, path: str, changed: bool = False, diagnostics: list[Diagnostic] | None = None,
                 diff: str = "", written: bool = False):
        self.path = path
        self.changed = changed
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.diff = diff
        self.written = written

    def _fields(self):
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other):
        return type(other) is FileReport and self._fields() == other._fields()

    __hash__ = None

    def __repr__(self):
        return "FileReport(" + ", ".join(f"{n}={v!r}" for n, v in zip(self.__slots__, self._fields())) + ")"

    @property
    def failed(self) -> bool:
        return any(d.is_failure for d in self.diagnostics)

    @property
    def refused(self) -> bool:
        return any(d.is_refusal for d in self.diagnostics)


def totals(reports: list[FileReport]) -> dict:
    return {
        "files": len(reports),
        "changed": sum(r.changed for r in reports),
        "refused": sum(d.is_refusal for r in reports for d in r.diagnostics),
        "failed": sum(r.failed for r in reports),
    }


def summary_line(reports: list[FileReport], write: bool) -> str:
    t = totals(reports)
    refused, failed = t["refused"], t["failed"]
    # with --write, a file counts as migrated once it is on disk (a read-only one fails with GRL905)
    changed = sum(r.written for r in reports) if write else t["changed"]
    verb = "migrated" if write else "would migrate"
    parts = [f"{changed} file{'s' if changed != 1 else ''} {verb}"]
    parts.append(f"{refused} site{'s' if refused != 1 else ''} refused")
    parts.append(f"{failed} file{'s' if failed != 1 else ''} failed")
    parts.append(f"{len(reports)} checked")
    return ", ".join(parts)


def exit_status(reports: list[FileReport], check: bool) -> int:
    if any(r.failed for r in reports):
        return EXIT_FAILED
    if check and any(r.changed or r.refused for r in reports):
        return EXIT_WOULD_CHANGE
    return EXIT_OK


def to_json(reports: list[FileReport], write: bool) -> str:
    files = [
        {
            "path": r.path,
            "changed": r.changed,
            "written": r.written,
            "diagnostics": [d.to_json() for d in sorted(r.diagnostics)],
        }
        for r in reports
    ]
    import json

    return json.dumps({"files": files, "totals": totals(reports), "write": write}, indent=2)
