"""Jupyter notebooks: migrate the code cells together, write back only what changed.
Why it is built so: docs/design.md, "migrator/notebooks.py"."""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Callable

from ..report import Diagnostic
from .precheck import MAGIC, may_hold_override

BOUNDARY = "__tf_grl_migrate_cell_boundary__"
_BOUNDARY_LINE = re.compile(rf"^{BOUNDARY}\((\d+)\)\n", re.MULTILINE)
# a line magic, a shell escape (also assigned: `files = !ls`), or help on a plain name (`obj?`, `?obj`)
_LINE_MAGIC = re.compile(r"^([ \t]*)((?:[A-Za-z_][\w.]*[ \t]*=[ \t]*)?)(?:[%!].*|\?+[\w.]+|[\w.]+\?+)[ \t]*$")
_PLACEHOLDER = re.compile(rf"^([ \t]*)((?:[A-Za-z_][\w.]*[ \t]*=[ \t]*)?){MAGIC}\((\d+)\)$")
# cell magics whose body is Python (black's list)
_PYTHON_CELL_MAGICS = frozenset({"capture", "prun", "pypy", "python", "python3", "time", "timeit"})


class NotebookError(Exception):
    """The notebook is not valid JSON of the expected shape (or cannot be written back exactly)."""


def load(text: str) -> dict[str, Any]:
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (no list of cells)")
    return nb


def cell_source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def mask(source: str) -> tuple[str, list[str]] | None:
    """(the cell with each magic line replaced by a placeholder call, the original lines), or None
    when the cell cannot be masked (a non-Python cell magic, or the placeholder name is taken)."""
    if MAGIC in source:
        return None
    saved: list[str] = []
    out: list[str] = []
    for number, line in enumerate(source.splitlines(keepends=True)):
        text = line.rstrip("\r\n")
        end = line[len(text):]
        if number == 0 and text.startswith("%%"):
            if (text[2:].split() or [""])[0] in _PYTHON_CELL_MAGICS:
                out.append(f"{MAGIC}({len(saved)}){end}")
                saved.append(text)
                continue
            return None
        found = _LINE_MAGIC.match(text)
        if found:
            out.append(f"{found.group(1)}{found.group(2)}{MAGIC}({len(saved)}){end}")
            saved.append(text)
        else:
            out.append(line)
    return "".join(out), saved


def unmask(text: str, saved: list[str]) -> str:
    """Put each magic line back where its placeholder is, byte for byte; NotebookError when a
    placeholder went missing or moved (then the notebook is not written)."""
    lines, restored = text.splitlines(keepends=True), set()
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        found = _PLACEHOLDER.match(body)
        if found is None:
            continue
        n = int(found.group(3))
        if n >= len(saved) or not saved[n].startswith(found.group(1) + found.group(2)) or n in restored:
            raise NotebookError("an IPython magic moved while migrating; notebook left unchanged")
        lines[i] = saved[n] + line[len(body):]
        restored.add(n)
    if len(restored) != len(saved) or MAGIC in "".join(lines):
        raise NotebookError("an IPython magic was lost while migrating; notebook left unchanged")
    return "".join(lines)


def _masked(source: str) -> tuple[str, list[str]] | None:
    masked = mask(source)
    if masked is None:
        return None
    try:
        ast.parse(masked[0])
    except (SyntaxError, ValueError):
        return None
    return masked


def glue(nb: dict[str, Any]) -> tuple[str, list[int], list[Diagnostic], dict[int, list[str]]]:
    """The code cells (magics masked) as one module; which cells they are; diagnostics for skipped
    cells; the magic lines of each cell, for :func:`split`."""
    parts: list[str] = []
    indices: list[int] = []
    diagnostics: list = []
    magics: dict = {}
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        source = cell_source(cell)
        masked = _masked(source)
        if masked is None:
            if may_hold_override(source):
                diagnostics.append(Diagnostic.said((1, 1), "GRL112", "not_python", cell=index + 1))
            continue
        source, magics[index] = masked
        if parts:
            parts.append(f"{BOUNDARY}({index})\n")
        parts.append(source if source.endswith("\n") or not source else source + "\n")
        indices.append(index)
    return "".join(parts), indices, diagnostics, magics


def split(nb: dict[str, Any], glued: str, indices: list[int], magics: dict[int, list[str]]) -> dict[int, str]:
    """New source per cell index, from the migrated module text, magics put back."""
    pieces = _BOUNDARY_LINE.split(glued)
    # pieces: [first, idx, text, idx, text, ...]
    texts = {indices[0]: pieces[0]}
    for i in range(1, len(pieces), 2):
        texts[int(pieces[i])] = pieces[i + 1]
    if sorted(texts) != sorted(indices):
        raise NotebookError("cell boundaries were lost while migrating; notebook left unchanged")
    result = {}
    for index, text in texts.items():
        text = unmask(text, magics.get(index, []))
        original = cell_source(nb["cells"][index])
        if not original.endswith("\n") and text.endswith("\n"):
            text = text[:-1]
        if text != original:
            result[index] = text
    return result


def cell_of_line(glued: str, indices: list[int], line: int) -> tuple[int, int]:
    """(1-based cell number, line within the cell) for a line of the glued module."""
    cell, start = indices[0], 1
    for number, text in enumerate(glued.splitlines(keepends=True), start=1):
        if number >= line:
            break
        found = _BOUNDARY_LINE.match(text)
        if found:
            cell, start = int(found.group(1)), number + 1
    return cell + 1, line - start + 1


def _json_format(text: str) -> dict:
    match = re.search(r"\n( +|\t)\"", text)
    indent = match.group(1) if match else None
    if indent is not None and indent.strip() == "":
        indent = len(indent)
    return {"indent": indent, "ensure_ascii": not re.search(r"[^\x00-\x7f]", text)}


def writer(nb: dict[str, Any], original_text: str) -> Callable[[dict[str, Any]], str]:
    """A function that serialises ``nb`` as the original file was written; call it before changing
    ``nb`` (it checks the loaded notebook reproduces ``original_text`` byte for byte, and raises
    :class:`NotebookError` when it does not).

    CRLF files (a Windows checkout) are handled as LF and converted back: JSON strings cannot hold
    a raw newline, so every newline in the file is formatting."""
    crlf = "\r\n" in original_text and "\n" not in original_text.replace("\r\n", "")
    lf_text = original_text.replace("\r\n", "\n") if crlf else original_text
    fmt = _json_format(lf_text)
    trailing = "\n" if lf_text.endswith("\n") else ""

    def dumps(notebook: dict[str, Any]) -> str:
        out = json.dumps(notebook, **fmt) + trailing
        return out.replace("\n", "\r\n") if crlf else out

    if dumps(nb) != original_text:
        raise NotebookError("cannot reproduce this notebook's JSON formatting byte for byte; not written")
    return dumps


def set_source(cell: dict[str, Any], text: str) -> None:
    if isinstance(cell.get("source"), list):
        cell["source"] = text.splitlines(keepends=True)
    else:
        cell["source"] = text
