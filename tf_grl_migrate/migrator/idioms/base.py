"""What every idiom module declares: its codes and its examples."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Idiom:
    """One idiom of TF1 gradient code. ``codes``: the GRL codes it raises (each in codes.CODES,
    each owned by one idiom); ``examples``: code -> a minimal module the tool refuses (1xx: left
    unchanged) or notes (2xx) with that code; ``cases``: the folders under tests/cases/rewrite
    whose migration shows it, each proven against TF1 by tests/test_differential.py (with
    ``runtime``, their ``after_runtime.py``: the ``--use-runtime`` strategy; a runtime idiom's case
    the inline rewrite refuses is under tests/cases/refuse, with its ``after_runtime.py``);
    ``valid``: minimal modules it must migrate (changed, nothing refused, a second run changing
    nothing; a runtime idiom's under ``--use-runtime``), run as tests beside the examples."""

    name: str
    summary: str
    codes: tuple[str, ...] = ()
    examples: dict[str, str] = field(default_factory=dict)
    cases: tuple[str, ...] = ()
    runtime: bool = False
    valid: tuple[str, ...] = ()


def source(*parts: str) -> str:
    """An example module, written indented in its idiom's file (each part dedented on its own)."""
    return "".join(textwrap.dedent(part) for part in parts).lstrip("\n")
