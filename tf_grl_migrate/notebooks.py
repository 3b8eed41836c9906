"""Jupyter notebooks: migrate the code cells together, write back only what changed.

A registration and its use often sit in different cells, so the clean code cells are migrated
as one module. Each cell is followed by a boundary *statement* (not a comment: a comment can
be dropped with the statement it is attached to, a call statement is never touched by the
codemod), and the result is split back at those statements. Cells with IPython magics or syntax
errors are left alone. The notebook's JSON is read and written with the standard library,
keeping its key order, indentation and non-ASCII characters, so untouched bytes stay identical.
"""

from __future__ import annotations

import ast
import json
import re

from .precheck import may_hold_override
from .report import Diagnostic

BOUNDARY = "__tf_grl_migrate_cell_boundary__"
_BOUNDARY_LINE = re.compile(rf"^{BOUNDARY}\((\d+)\)\n", re.MULTILINE)
_MAGIC = re.compile(r"^\s*(%|!|\?)|\?\s*$", re.MULTILINE)


class NotebookError(Exception):
    """The notebook is not valid JSON of the expected shape (or cannot be written back exactly)."""


def load(text: str):
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (no list of cells)")
    return nb


def cell_source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _usable(source: str) -> bool:
    if _MAGIC.search(source):
        return False
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def glue(nb) -> tuple[str, list[int], list[Diagnostic]]:
    """The clean code cells as one module; which cells they are; diagnostics for skipped cells."""
    parts, indices, diagnostics = [], [], []
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        source = cell_source(cell)
        if not _usable(source):
            if may_hold_override(source):
                diagnostics.append(Diagnostic(1, 1, "GRL112", "this cell has IPython magics or does not parse, so "
                                                              "its gradient override was not migrated; migrate it by "
                                                              "hand with @tf.custom_gradient", cell=index + 1))
            continue
        if parts:
            parts.append(f"{BOUNDARY}({index})\n")
        parts.append(source if source.endswith("\n") or not source else source + "\n")
        indices.append(index)
    return "".join(parts), indices, diagnostics


def split(nb, glued: str, indices: list[int]) -> dict[int, str]:
    """New source per cell index, from the migrated module text."""
    pieces = _BOUNDARY_LINE.split(glued)
    # pieces: [first, idx, text, idx, text, ...]
    texts = {indices[0]: pieces[0]}
    for i in range(1, len(pieces), 2):
        texts[int(pieces[i])] = pieces[i + 1]
    if sorted(texts) != sorted(indices):
        raise NotebookError("cell boundaries were lost while migrating; notebook left unchanged")
    result = {}
    for index, text in texts.items():
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


def writer(nb, original_text: str):
    """A function that serialises ``nb`` as the original file was written; call it before changing
    ``nb`` (it checks the loaded notebook reproduces ``original_text`` byte for byte, and raises
    :class:`NotebookError` when it does not).

    CRLF files (a Windows checkout) are handled as LF and converted back: JSON strings cannot hold
    a raw newline, so every newline in the file is formatting."""
    crlf = "\r\n" in original_text and "\n" not in original_text.replace("\r\n", "")
    lf_text = original_text.replace("\r\n", "\n") if crlf else original_text
    fmt = _json_format(lf_text)
    trailing = "\n" if lf_text.endswith("\n") else ""

    def dumps(notebook) -> str:
        out = json.dumps(notebook, **fmt) + trailing
        return out.replace("\n", "\r\n") if crlf else out

    if dumps(nb) != original_text:
        raise NotebookError("cannot reproduce this notebook's JSON formatting byte for byte; not written")
    return dumps


def set_source(cell, text: str) -> None:
    if isinstance(cell.get("source"), list):
        cell["source"] = text.splitlines(keepends=True)
    else:
        cell["source"] = text
