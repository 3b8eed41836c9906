"""The one place a site's outcome is decided, in the main process, from the values the workers
computed: the TF1 reference (``Ran``) against what the migrated code gave under TF2 (``Values``),
element by element, in plain Python (no numpy: nothing a worker's code could have patched).
Forward values must agree to 1e-6 and gradients to 1e-5 relative, 1e-6 absolute: |a - b| <=
atol + rtol * |b|; equal non-finite values at equal places (inf and inf, NaN and NaN) count as
equal, a non-finite value against any other differs. Every run asked of the TF2 side (each
mode, each setting) must be answered, or the site is not verifiable."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from .protocol import MODES, Array, ModeError, ModeValues, Ran, RunValues, Status, Values

FORWARD_TOL = (1e-6, 1e-6)  # (rtol, atol): float32 rounding of the same ops
GRADIENT_TOL = (1e-5, 1e-6)  # the same math in another order


@dataclass(frozen=True)
class Outcome:
    status: Status
    max_abs_diff: float | None = None
    reason: str | None = None
    transient: bool = False  # no answer, for a reason of the machine's (protocol.Unverifiable)


class Deviation(NamedTuple):
    worst: float  # the largest |got - want| over the finite pairs
    bad: int  # elements outside atol + rtol * |want|
    non_finite: int  # of those, where one side is inf or NaN and the other is not the same value


def deviation(got: Array, want: Array, rtol: float, atol: float) -> Deviation:
    """How far ``got`` is from ``want``: equal non-finite values at equal places (inf and inf of
    one sign, NaN and NaN) agree; a non-finite value against anything else differs."""
    worst, bad, non_finite = 0.0, 0, 0
    for a, b in zip(got.values, want.values):
        if a == b or (math.isnan(a) and math.isnan(b)):
            continue
        if not (math.isfinite(a) and math.isfinite(b)):
            bad += 1
            non_finite += 1
            continue
        diff = abs(a - b)
        if not diff <= atol + rtol * abs(b):
            bad += 1
        worst = max(worst, diff)
    return Deviation(worst, bad, non_finite)


def setting_text(setting: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in setting.items() if not k.startswith("__grl")) or "the defaults"


def judge(reference: Ran, values: Values, name: str, inputs: list, written: list | None,
          block_written: set | None = None) -> Outcome:
    """TF2's values against TF1's. ``name``: the entry's; ``inputs``: the names of the tensors
    the gradients are taken for; ``written``: the lines of the migrated text the tool wrote (None
    for a migration by hand, where every failure is the port's); ``block_written``: of a block
    exercised alone, the lines of its file the tool wrote."""
    if not values.defined:
        return Outcome(Status.DIFFERS, None, f"the migrated module defines no {name}")
    worst, skipped, ran = 0.0, [], 0
    stopped = set()
    compared = set()  # the settings a mode ran and matched
    for run in values.runs:
        if run.setting >= len(reference.results):
            return Outcome(Status.NOT_VERIFIABLE, None, "a worker answered for a setting it was not given")
        result = reference.results[run.setting]
        where = f"{run.mode}, {setting_text(result.setting)}"
        if run.mode in stopped:
            continue
        if isinstance(run, ModeError):
            failure = _failure(run, written, block_written)
            if failure.status is not Status.NOT_VERIFIABLE or run.missing:
                return Outcome(
                    failure.status, None, f"{where}: {failure.reason}" if not run.missing else failure.reason
                )
            skipped.append((run.mode, failure.reason))
            stopped.add(run.mode)
            continue
        outcome = _compared(run, result, inputs, where)
        if outcome.status is not Status.VERIFIED:
            return outcome
        worst = max(worst, outcome.max_abs_diff or 0.0)
        ran += 1
        compared.add(run.setting)
    if not ran:
        return Outcome(Status.NOT_VERIFIABLE, None, skipped[0][1] if skipped else "no mode ran")
    uncovered = [i for i in range(len(reference.results)) if i not in compared]
    if uncovered and skipped:  # a setting no mode ran may be the only one reaching the site (`scale=0.5`, not 1.0)
        result = reference.results[uncovered[0]]
        return Outcome(Status.NOT_VERIFIABLE, None, f"{setting_text(result.setting)} ran in no mode: {skipped[0][1]}")
    unanswered = _unanswered(reference, values, stopped)
    if unanswered:
        return Outcome(Status.NOT_VERIFIABLE, None, f"no answer for {unanswered}")
    note = "; ".join(f"{m} not run: {why}" for m, why in skipped) or None
    return Outcome(Status.VERIFIED, worst, note)


def _compared(run: ModeValues, result: RunValues, inputs: list, where: str) -> Outcome:
    """One run of the TF2 side against TF1's result for the same setting: VERIFIED with the
    largest deviation, or what differs (or why the two cannot be matched)."""
    if run.variables != len(result.variables):
        return Outcome(Status.NOT_VERIFIABLE, None,
                       f"the migrated code makes {run.variables} variables where TF1 made {len(result.variables)}, "
                       "so their initial values cannot be matched")
    if len(run.y) != len(result.y):
        return Outcome(Status.DIFFERS, None, f"{where}: {len(run.y)} outputs where TF1 gave {len(result.y)}")
    if len(run.g) != len(result.g):
        return Outcome(Status.DIFFERS, None, f"{where}: {len(run.g)} gradients where TF1 gave {len(result.g)}")
    worst = 0.0
    pairs = [("forward value", got, want, *FORWARD_TOL) for got, want in zip(run.y, result.y)]
    pairs += [(f"gradient of {n}", got, want, *GRADIENT_TOL) for n, got, want in zip(inputs, run.g, result.g)]
    for what, got, want, rtol, atol in pairs:
        if got.shape != want.shape:
            return Outcome(Status.DIFFERS, None,
                           f"{where}: {what} has shape {list(got.shape)}, TF1's {list(want.shape)}")
        d, bad, non_finite = deviation(got, want, rtol, atol)
        worst = max(worst, d)
        if bad:
            shown = f"max |diff| {d:.3g}, {bad} of {got.size} elements"
            if non_finite:
                shown += f"; {non_finite} of them inf or NaN on one side only"
            return Outcome(Status.DIFFERS, d, f"{where}: {what} differs from TF1's ({shown})")
    return Outcome(Status.VERIFIED, worst, None)


def _unanswered(reference: Ran, values: Values, stopped: set) -> str | None:
    """The first (mode, setting) asked of the TF2 side that its answer does not cover: every
    setting of each mode, unless the mode stopped at an error."""
    answered = {(run.mode, run.setting) for run in values.runs}
    for mode in MODES:
        if mode in stopped:
            continue
        for index, result in enumerate(reference.results):
            if (mode, index) not in answered:
                return f"{mode}, {setting_text(result.setting)}"
    return None


def _failure(run: ModeError, written: list | None, block_written: set | None) -> Outcome:
    """An error under TF2 where TF1 ran: the tool's fault where it arose in a line the tool wrote
    (anywhere, for a migration by hand); a module not installed, or other TF1 API the migrator
    leaves alone (``tf_upgrade_v2``'s job), otherwise."""
    if run.missing:
        return Outcome(Status.NOT_VERIFIABLE, None, run.error)
    line = run.lines[-1] if run.lines else None
    if written is None:
        return Outcome(Status.DIFFERS, None, f"raises under TF2 where the original ran under TF1: {run.error}"
                                             + (f" (line {line})" if line else ""))
    ours = [n for n in run.lines if n in set(written)] + [n for n in run.block_lines if n in (block_written or ())]
    if ours:
        return Outcome(Status.DIFFERS, None, f"raises in code the migration wrote (line {ours[-1]}) where the original "
                                             f"ran under TF1: {run.error}")
    at = f" at line {line}" if line else ""
    return Outcome(Status.NOT_VERIFIABLE, None, f"raises{at}, in code the migration did not change (other TF1 API is "
                                                f"tf_upgrade_v2's job): {run.error}")


def same(mine: Ran, reference: Ran) -> bool:
    """The migrated text under TF1 semantics gives the original's values (setting by setting)."""
    if len(mine.results) != len(reference.results):
        return False
    for a, b in zip(mine.results, reference.results):
        for got, want, (rtol, atol) in [*((g, w, FORWARD_TOL) for g, w in zip(a.y, b.y)),
                                        *((g, w, GRADIENT_TOL) for g, w in zip(a.g, b.g))]:
            if got.shape != want.shape or deviation(got, want, rtol, atol).bad:
                return False
        if len(a.y) != len(b.y) or len(a.g) != len(b.g):
            return False
    return True


def block_written(entry: dict, written: list | None) -> set | None:
    """The lines of a block's file (``__grl_block__``: a def line, then the migrated lines from
    ``first`` on, then its return) that the tool wrote."""
    if entry.get("kind") != "block" or written is None:
        return None
    lines = entry["migrated"]["source"].count("\n")
    first = entry["migrated"]["first"]
    return {k for k in range(2, lines + 1) if k == lines or first + k - 2 in set(written)}
