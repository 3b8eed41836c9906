"""Proof on the user's own code: every migrated override site is exercised numerically, the
original under TF1 semantics and the migrated code under TF2 (eagerly and in ``tf.function``),
with the same inputs and the same upstream gradient.

This module drives it and never imports TensorFlow: ``probes.py`` plans what to run (from the
source, with ``ast``), workers run it (``pool.py`` starts them: ``zygote.py``, one child per
request, ``isolation.py``) and answer with values; ``verdict.py`` decides, here. Outcomes per site
(codes in ``codes.CODES``): GRL301 verified, GRL302 differs (the tool made a wrong rewrite: with
``--write`` the file is not written, and the exit status is 1), GRL303 not verifiable (why, so
the site can be tested by hand). Results are cached by both texts, the tool and TensorFlow's
version, and the project modules the run loaded.
"""

from __future__ import annotations

import ast
import os
import queue
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..migrator import precheck
from . import calling, probes, verdict
from .pool import Worker, isolation_line
from .protocol import Entry, Kind, ModeError, Ran, Request, Status, Unverifiable, Values, shape_of

if TYPE_CHECKING:
    from ..migrator.cache import Cache
    from ..report import Diagnostic

DEFAULT_TIMEOUT = 60.0  # seconds per site and side, TensorFlow's import not counted
MAX_WORKERS = 4  # whatever -j says: each holds TensorFlow (~0.5 GB resident)
CODE_OF = {Status.VERIFIED: "GRL301", Status.DIFFERS: "GRL302", Status.NOT_VERIFIABLE: "GRL303"}
VERIFIED, DIFFERS, NOT_VERIFIABLE = Status.VERIFIED.value, Status.DIFFERS.value, Status.NOT_VERIFIABLE.value
ISOLATION: dict[str, str | None] = {"line": None}  # what the last run's workers said of their isolation, where short


class Verification(NamedTuple):
    """One site's outcome (``to_json`` is the report's ``verification`` entry)."""

    line: int
    col: int
    callable: str
    status: str
    max_abs_diff: float | None = None
    reason: str | None = None
    transient: bool = False  # the machine's doing (verdict.Outcome): not stored, not in the report

    def to_json(self) -> dict[str, Any]:
        return {"callable": self.callable, "line": self.line, "col": self.col, "status": str(self.status),
                "max_abs_diff": self.max_abs_diff, "reason": self.reason}

    def diagnostic(self, hand: bool = False) -> Diagnostic:
        """One line (the callable and the reason's first clause, clipped), then the whole in
        details where the line clipped it. ``hand``: the migration checked is the user's
        (``--verify-against``), not the tool's."""
        from ..report import Diagnostic

        called, reason = _clipped(self.callable, 60, "("), self.reason or ""
        whole = f"{self.callable}: {reason}" if reason else self.callable
        where, code = (self.line, self.col), CODE_OF[Status(self.status)]
        if self.status == VERIFIED:
            note, diff = _clipped(reason, 50, ":"), _number(self.max_abs_diff)
            if called != self.callable or note != reason:
                if not reason:
                    return Diagnostic.said(where, code, "verified_clipped", called=called, diff=diff, whole=whole)
                return Diagnostic.said(where, code, "verified_noted_clipped", called=called, diff=diff, note=note,
                                       whole=whole)
            if not reason:
                return Diagnostic.said(where, code, "verified", called=called, diff=diff)
            return Diagnostic.said(where, code, "verified_noted", called=called, diff=diff, note=note)
        if self.status == DIFFERS:
            return Diagnostic.said(where, code, "differs_by_hand" if hand else "differs", called=called,
                                   reason=_clipped(reason, 80 if hand else 60), whole=whole)
        short = _clipped(reason, 80)
        if called == self.callable and short == reason:
            return Diagnostic.said(where, code, "not_verifiable", called=called, reason=short)
        return Diagnostic.said(where, code, "not_verifiable_clipped", called=called, reason=short, whole=whole)


def _clipped(text: str, limit: int, stop: str = "") -> str:
    """``text`` up to ``limit`` characters for the one line: to ``stop`` (the arguments of a long
    call label, a clause) where that is what overflows, else at a word, marked with "..."."""
    if len(text) <= limit:
        return text
    if stop and stop in text and text.index(stop) <= limit:
        return text[:text.index(stop)] + ("(...)" if stop == "(" else "")
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}..."


def _number(x: float | None) -> str:
    return "0" if not x else f"{x:.3g}"


class Job(NamedTuple):
    """One file to verify: the original text under TF1, the migrated text under TF2. ``path`` is
    the original's (its folder is where the project's modules it imports are found)."""

    path: str
    original: str
    migrated: str | None  # None: take every site of the original (--verify-against gives `against`)
    against: str | None = None  # --verify-against: the hand-migrated text (another file)
    against_path: str | None = None
    pairs: tuple[tuple[str, str], ...] = ()  # --verify-call: (original's name, the port's name)


Judged = tuple[verdict.Outcome, str]  # a site's outcome, and the label of what was called to reach it
Exercised = tuple[verdict.Outcome, str, bool]  # ..., and whether the TF1 side ran it


class _Task(NamedTuple):
    job: Job
    new_text: str
    probe: probes.Probe
    # --verify-against: (probe, the port's name) reaching the site; else empty
    candidates: tuple[tuple[probes.Probe, str], ...]
    refusal: str | None  # --verify-against: why no name of the port reaches the site


def verify(jobs: Sequence[Job], *, workers: int = 1, timeout: float | None = None, python: str | None = None,
           roots: Sequence[str] = ()) -> dict[str, list[Verification]]:
    """{path: [Verification, ...]} for each job, in site order. Starts up to ``workers`` worker
    processes (at most this machine's cores and MAX_WORKERS; only when some probe needs running).
    Under TF2, a project module that the run migrated is loaded as migrated."""
    python = python or sys.executable
    timeout = timeout or DEFAULT_TIMEOUT
    migrated = {os.path.abspath(j.path): j.migrated for j in jobs if j.against is None and j.migrated is not None}
    results: dict[str, list[Verification]] = {}
    tasks: list[_Task] = []
    parsed = [precheck.parse(job.original) for job in jobs]
    others = [t for t in parsed if t is not None]
    for job, tree in zip(jobs, parsed):
        results[job.path] = []
        if tree is None:
            continue
        new_text = job.against if job.against is not None else job.migrated
        assert new_text is not None  # a job checks a migration: the tool's, or the port --verify-against gives
        try:
            found = probes.plan(job.original, None if job.against is not None else job.migrated,
                                [t for t in others if t is not tree])
            port = ast.parse(job.against) if job.against is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            results[job.path].append(Verification(1, 1, "<module>", NOT_VERIFIABLE, None,
                                                  f"the migrated text does not parse: {exc}"))
            continue
        for probe in found:
            candidates, refusal = _candidates(tree, port, probe, job.pairs, others) if port is not None else ((), None)
            tasks.append(_Task(job, new_text, probe, candidates, refusal))
    outcomes = _run(tasks, workers, timeout, python, roots, migrated)
    for task, per_site in zip(tasks, outcomes):
        for (line, col), (outcome, label) in zip(task.probe.sites, per_site):
            results[task.job.path].append(Verification(line, col, label, outcome.status.value, outcome.max_abs_diff,
                                                       outcome.reason, outcome.transient))
    for path in results:
        results[path].sort()
    return results


def _candidates(tree: ast.Module, port: ast.Module, probe: probes.Probe, pairs: Iterable[tuple[str, str]],
                others: Sequence[ast.Module]) -> tuple[tuple[tuple[probes.Probe, str], ...], str | None]:
    """--verify-against: the ways to reach the site that the port can be called through, by the
    original's module-level names (its own, an instance of its class, a function calling it) that
    the port defines too, or that --verify-call pairs with one of the port's; or why there is none."""
    if probe.reason is not None:
        return (), None
    defined = probes.module_names(port)
    paired = dict(pairs)
    found, names = [], []
    for way in [probe, *probes.reaching(tree, probe, others)]:
        name = way.entry["name"]
        names.append(name)
        port_name = paired.get(name, name)
        if port_name in defined:
            entry = way.entry if port_name == name else {**way.entry, "port_name": port_name}
            found.append((way._replace(entry=entry), port_name))
    if found:
        return tuple(found), None  # every one: a port wrong only through its fourth name must differ
    callables = sorted(n for n in defined if not n.startswith("_"))
    return (), (f"the port defines none of the names that reach this site in the original ({', '.join(names)}); its "
                f"module-level names: {', '.join(callables[:12]) or 'none'}; pair one with --verify-call "
                f"{names[0]}=NAME")


def _unrunnable(tasks: Sequence[_Task]) -> tuple[list[list[Judged] | None], list[int]]:
    """(each task's outcomes where it cannot run: refused or without a probe, else None; the
    indices of those that run)."""
    outcomes: list[list[Judged] | None] = [None] * len(tasks)
    runnable = []
    for i, task in enumerate(tasks):
        probe = task.probe
        why = task.refusal if task.refusal is not None else (
            None if probe.reason is None or any(probe.fallbacks) else probe.reason)
        if why is None:
            runnable.append(i)
        else:
            outcomes[i] = [(verdict.Outcome(Status.NOT_VERIFIABLE, None, why), _shown(probe.label, None))
                           ] * len(probe.sites)
    return outcomes, runnable


def _run(tasks: Sequence[_Task], workers: int, timeout: float, python: str, roots: Sequence[str],
         migrated: dict[str, str]) -> list[list[Judged]]:
    outcomes, runnable = _unrunnable(tasks)
    if not runnable:
        return [found for found in outcomes if found is not None]  # each refused, or without a probe
    count = max(1, min(workers, len(runnable), MAX_WORKERS, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory(prefix="tf-grl-verify-") as folder:
        pool: queue.Queue = queue.Queue()
        made = [Worker(python, folder) for _ in range(count)]
        for w in made:
            pool.put(w)
        pending: queue.Queue = queue.Queue()
        for i in runnable:
            pending.put(i)

        def drive() -> None:
            while True:
                try:
                    i = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcomes[i] = _one(tasks[i], pool, timeout, roots, migrated)
                except Exception as exc:  # noqa: BLE001 - one file's failure is that file's, never the run's
                    outcomes[i] = _failed(tasks[i].probe, f"the verifier failed on it ({type(exc).__name__}: {exc})")

        threads = [threading.Thread(target=drive, daemon=True) for _ in range(count)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            for w in made:
                w.stop()
        ISOLATION["line"] = isolation_line(made)
    # a drive thread that died for a reason of its own: its files were not run
    return [found if found is not None else _failed(task.probe, "the verifier stopped before it ran this site")
            for task, found in zip(tasks, outcomes)]


def _failed(probe: probes.Probe, why: str) -> list[Judged]:
    """The verifier's own failure: no answer about the code, so nothing to store."""
    outcome = verdict.Outcome(Status.NOT_VERIFIABLE, None, why[:500], transient=True)
    return [(outcome, _shown(probe.label, None))] * len(probe.sites)


def _one(task: _Task, pool: queue.Queue[Worker], timeout: float, roots: Sequence[str],
         migrated: dict[str, str]) -> list[Judged]:
    """[(Outcome, label)] per site of the probe: its callable (for a hand port, each name that
    reaches the site in both), or, where that cannot run, each site's block alone."""
    probe = task.probe
    if probe.reason is None:
        if task.candidates:
            outcome, label, ran = _through_names(task, pool, timeout, roots, migrated)
        else:
            outcome, label, ran = _exercise(task.job, task.new_text, probe, pool, timeout, roots, migrated)
        if (ran and outcome.status is not Status.NOT_VERIFIABLE) or not any(probe.fallbacks):
            return [(outcome, label)] * len(probe.sites)
        why = f"{label} could not be exercised ({outcome.reason})"
    else:
        outcome, label = verdict.Outcome(Status.NOT_VERIFIABLE, None, probe.reason), _shown(probe.label, None)
        why = f"{label}: {probe.reason}"
    out = []
    for alone in probe.fallbacks or [None] * len(probe.sites):
        if alone is None:
            out.append((outcome, label))
            continue
        result, block_label, ran = _exercise(task.job, task.new_text, alone, pool, timeout, roots, migrated)
        if not ran:
            out.append((outcome, label))  # the callable's reason says more than the block's
            continue
        note = f"the override block alone: {why}"
        reason = f"{result.reason}; {note}" if result.reason else note
        out.append((verdict.Outcome(result.status, result.max_abs_diff, reason, result.transient), block_label))
    return out


def _through_names(task: _Task, pool: queue.Queue[Worker], timeout: float, roots: Sequence[str],
                   migrated: dict[str, str]) -> Exercised:
    """A hand port, through each name that reaches the site in the original and that the port
    defines: a difference anywhere differs; else one verified way verifies."""
    tried = []
    for way, _ in task.candidates:
        tried.append(_exercise(task.job, task.new_text, way, pool, timeout, roots, migrated))
    for wanted in (Status.DIFFERS, Status.VERIFIED):
        found = next((t for t in tried if t[0].status is wanted), None)
        if found is not None:
            return found
    return tried[0]


def _exercise(job: Job, new_text: str, probe: probes.Probe, pool: queue.Queue[Worker], timeout: float,
              roots: Sequence[str], migrated: dict[str, str]) -> Exercised:
    """(Outcome, label, whether TF1 ran it): the original under TF1, the migration under TF2,
    called the first way TF1 runs; where TF2 cannot run that way (it raises in code the migration
    did not change: ``if scale == 0.0`` on the tensor a way gave ``scale``, which a TF1 graph
    compared as an object), the next way that runs under TF1 is tried, and the first answer stands
    unless a later way gives one."""
    outcome, label, ran, variant = _exercise_way(job, new_text, probe, pool, timeout, roots, migrated, 0)
    if not (ran and outcome.status is Status.NOT_VERIFIABLE and not outcome.transient
            and variant + 1 < len(probe.labels)):
        return outcome, label, ran
    later, later_label, later_ran, _ = _exercise_way(job, new_text, probe, pool, timeout, roots, migrated, variant + 1)
    if not later_ran or later.status is Status.NOT_VERIFIABLE:
        return outcome, label, ran
    why = f"called so because TF2 could not run {label} ({outcome.reason})"
    return (verdict.Outcome(later.status, later.max_abs_diff, f"{later.reason}; {why}" if later.reason else why,
                            later.transient), later_label, True)


def _exercise_way(job: Job, new_text: str, probe: probes.Probe, pool: queue.Queue[Worker], timeout: float,
                  roots: Sequence[str], migrated: dict[str, str], start: int) -> tuple[verdict.Outcome, str, bool, int]:
    """``_exercise`` from the way of calling ``start`` on: ..., and the way TF1 ran (-1: none)."""
    path = os.path.abspath(job.path)
    roots = [os.path.abspath(r) for r in roots]
    shapes = [list(s) for s in (*probes.SHAPES, *probe.shapes)]
    reference = _ask(pool, Request(Kind.TF1, path, job.original, probe.entry, shapes, roots,
                                   first_variant=start), timeout)
    if not isinstance(reference, Ran):
        return _unanswered("TF1", reference), _shown(probe.label, None), False, -1
    if not 0 <= reference.variant < len(probe.labels):
        return (verdict.Outcome(Status.NOT_VERIFIABLE, None, f"under TF1: the worker answered for way "
                                f"{reference.variant} of calling it, of {len(probe.labels)} asked"),
                _shown(probe.label, None), False, -1)
    label = _shown(probe.labels[reference.variant], list(reference.shape))
    if "{init}" in label:
        label = label.replace("{init}", probe.entry["made"][1 if reference.new else 0])
    written = probes.written_lines(job.original, new_text) if job.against is None else None
    tf2 = Request(Kind.TF2, os.path.abspath(job.against_path or job.path), new_text, probe.entry, [], roots,
                  migrated if job.against is None else {}, written, reference.plan())
    answer = _ask(pool, tf2, timeout)
    if not isinstance(answer, Values):
        return _unanswered("TF2", answer), label, True, reference.variant
    names = _input_names(probe.entry, reference)
    outcome = verdict.judge(reference, answer, probe.entry.get("port_name", probe.entry["name"]), names, written,
                            verdict.block_written(probe.entry, written))
    if outcome.status is Status.DIFFERS and job.against is None:
        outcome = _attributed(job, new_text, probe, reference, outcome, pool, timeout, roots)
    elif job.against is None and any(isinstance(r, ModeError) and not r.missing for r in answer.runs):
        outcome = _broken(job, new_text, probe, reference, outcome, answer, pool, timeout, roots)
    if outcome.status is Status.NOT_VERIFIABLE and outcome.reason:
        outcome = verdict.Outcome(outcome.status, outcome.max_abs_diff, "under TF2: " + outcome.reason)
    if outcome.status is Status.VERIFIED:
        notes = [n for n in (reference.note, answer.note, outcome.reason) if n]
        outcome = verdict.Outcome(outcome.status, outcome.max_abs_diff, "; ".join(notes) or None)
    return outcome, label, True, reference.variant


def _unanswered(side: str, answer: object) -> verdict.Outcome:
    """A side that did not run: why, and whether the machine is to blame (protocol.Unverifiable)."""
    if isinstance(answer, Unverifiable):
        return verdict.Outcome(Status.NOT_VERIFIABLE, None, f"under {side}: {answer.reason}", answer.transient)
    return verdict.Outcome(Status.NOT_VERIFIABLE, None, f"under {side}: no answer", transient=True)


def _input_names(entry: Entry, reference: Ran) -> list[str]:
    """The names of the tensors the gradients are taken for (the module's variables read by a
    block included), in the order the workers take them."""
    names = calling.input_names(entry["variants"][reference.variant], entry)
    extra = len(reference.results[0].g) - len(names)
    return names + [f"a variable of the module ({i + 1})" for i in range(max(0, extra))]


def _ask(pool: queue.Queue[Worker], request: Request, timeout: float) -> object:
    """One request to a free worker."""
    worker = pool.get()
    try:
        return worker.ask(request, timeout)
    finally:
        pool.put(worker)


def _as_the_original(job: Job, new_text: str, probe: probes.Probe, reference: Ran, pool: queue.Queue[Worker],
                     timeout: float, roots: list[str]) -> tuple[bool | None, str]:
    """The migrated code under TF1 semantics, called as the reference was: (True, "") where it
    gives the original's values, (False, why) where it does not (other values, or it raises), and
    (None, "") where no answer came (the machine's doing)."""
    request = Request(Kind.TF1_SAME, os.path.abspath(job.path), new_text, probe.entry, [], roots,
                      reference=reference.plan())
    mine = _ask(pool, request, timeout)
    if isinstance(mine, Ran):
        same = verdict.same(mine, reference)
        return same, "" if same else "under TF1 semantics it does not give the original's values either"
    if isinstance(mine, Unverifiable) and not mine.transient:
        return False, f"it raises under TF1 semantics too ({mine.reason[:200]})"
    return None, ""


def _attributed(job: Job, new_text: str, probe: probes.Probe, reference: Ran, outcome: verdict.Outcome,
                pool: queue.Queue[Worker], timeout: float, roots: list[str]) -> verdict.Outcome:
    """A TF2 result that is not TF1's is the migration's only if the migrated code under TF1
    semantics is not the original's either. Where it is (the same values), TF2 means something
    else by code the migration did not change (``softmax_cross_entropy_with_logits``
    backpropagates into its labels in TF2): no wrong rewrite; the site is not verifiable."""
    if _as_the_original(job, new_text, probe, reference, pool, timeout, roots)[0] is not True:
        return outcome
    return verdict.Outcome(Status.NOT_VERIFIABLE, None, (
        f"{outcome.reason}; but the migrated code under TF1 semantics gives the original's values, so the difference "
        "is TF2's meaning for code the migration did not change (other TF1 API whose meaning changed in TF2); check "
        "those calls by hand"))


def _broken(job: Job, new_text: str, probe: probes.Probe, reference: Ran, outcome: verdict.Outcome, answer: Values,
            pool: queue.Queue[Worker], timeout: float, roots: list[str]) -> verdict.Outcome:
    """TF2 raised in code the migration did not change: TF2's meaning of other TF1 API, unless the
    migration broke that code (a call passing what the migrated function no longer takes). The
    migrated code under TF1 semantics tells: where it raises too, or gives other values, where
    the original ran, the migration is to blame."""
    same, why = _as_the_original(job, new_text, probe, reference, pool, timeout, roots)
    if same is not False:
        return outcome  # it runs as the original under TF1 (TF2's meaning, not the migration), or no answer
    error = next(r for r in answer.runs if isinstance(r, ModeError) and not r.missing)
    return verdict.Outcome(Status.DIFFERS, None, f"{error.mode}: raises where the original ran under TF1 "
                                                 f"({error.error[:200]}); {why}: the migration broke it")


def _shown(label: str, shape: Sequence[Any] | None) -> str:
    """The label with each input's shape (its first input's, then the others')."""
    if shape:
        first, rest = (",".join(map(str, shape_of(shape, i))) for i in (0, 1))
        label = label.replace("{shape}", first, 1).replace("{shape}", rest)
    return label.replace("{shape}", "?").replace("{init}", "(...)")


# ---------------------------------------------------------------------------------------------
# Texts in, outcomes out: the files' side (reading, placing, writing) is tf_grl_migrate.api's


def verify_cached(jobs: Sequence[Job], roots: Iterable[str], *, cache: Cache | None = None, workers: int = 1,
                  timeout: float | None = None, python: str | None = None) -> dict[str, list[Verification]]:
    """:func:`verify` with the result cache (a ``migrator.cache.Cache``, or None): a job whose
    texts, tool, TensorFlow's version and neighbouring project modules are as before is answered
    from it, the rest computed and stored. ``roots``: the paths the run was given (their folders
    are where the project's modules are found)."""
    found: dict[str, list[Verification]] = {}
    keys: dict[str, str] = {}
    todo: list[Job] = []
    version = tensorflow_version(python) if cache is not None and jobs else ""
    for job in jobs:
        if cache is not None:
            data = "\0".join([job.original, job.migrated or "", job.against or "", version, _neighbours(job.path)])
            keys[job.path] = key = cache.key(data.encode("utf-8", "surrogatepass"), False, "verify")
            stored = cache.get_data(key)
            if stored is not None:
                try:
                    found[job.path] = [Verification(*v) for v in stored]
                    continue
                except TypeError:
                    pass
        todo.append(job)
    if todo:
        computed = verify(todo, workers=workers, timeout=timeout, python=python, roots=_folders(roots))
        for job in todo:
            results = found[job.path] = computed.get(job.path, [])
            if cache is not None and not any(v.transient for v in results):
                cache.put_data(keys[job.path], [list(v) for v in results])
    return found


def _folders(paths: Iterable[str]) -> list[str]:
    return sorted({os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths})


def _neighbours(path: str) -> str:
    """What the project modules beside a file are now (names, sizes, times): a module the checked
    code imports may have changed since a result was stored."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        entries = sorted(e for e in os.listdir(folder) if e.endswith(".py") or os.path.isdir(os.path.join(folder, e)))
    except OSError:
        return ""
    parts = []
    for name in entries:
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def tensorflow_version(python: str | None = None) -> str:
    """TensorFlow's version as installed for ``python`` (this interpreter: read from its package
    metadata, without importing it)."""
    if python and os.path.realpath(python) != os.path.realpath(sys.executable):
        return f"tensorflow of {python}"
    from importlib import metadata

    for dist in ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos",
                 "tf-nightly", "tf-nightly-cpu"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return "tensorflow missing"
