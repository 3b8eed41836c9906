"""Proof on the user's own code: every migrated override site is exercised numerically, the
original under TF1 semantics and the migrated code under TF2 (eagerly and in ``tf.function``),
with the same inputs and the same upstream gradient.

This module drives it and never imports TensorFlow: ``probes.py`` plans what to run (from the
source, with ``ast``), ``verify_worker.py`` runs it in worker processes (TensorFlow imported once
per worker; ``-j`` of each kind; a time limit per site and side; a memory cap). Outcomes per site
(codes in ``codes.CODES``): GRL301 verified, GRL302 differs (the tool made a wrong rewrite: with
``--write`` the file is not written, and the exit status is 1), GRL303 not verifiable (why, so
the site can be tested by hand). Results are cached by both texts, the tool and TensorFlow's
version, and the project modules the run loaded.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from typing import NamedTuple

from . import precheck, probes

DEFAULT_TIMEOUT = 60.0  # seconds per site and side, TensorFlow's import not counted
MEMORY_CAP = 8 << 30  # bytes of address space a worker may map (TensorFlow alone maps ~1 GiB)
MAX_WORKERS = 4  # of each kind, whatever -j says: each holds TensorFlow (~0.5 GB resident)
# Forward values must match up to float32 rounding of the same ops; gradients within float
# tolerance (the same math in another order). Element-wise: |a - b| <= atol + rtol * |b|.
FORWARD_TOL = (1e-6, 1e-6)  # (rtol, atol)
GRADIENT_TOL = (1e-5, 1e-6)

VERIFIED, DIFFERS, NOT_VERIFIABLE = "verified", "differs", "not_verifiable"
CODE_OF = {VERIFIED: "GRL301", DIFFERS: "GRL302", NOT_VERIFIABLE: "GRL303"}


class Verification(NamedTuple):
    """One site's outcome (``to_json`` is the report's ``verification`` entry)."""

    line: int
    col: int
    callable: str
    status: str
    max_abs_diff: float | None = None
    reason: str | None = None

    def to_json(self) -> dict:
        return {"callable": self.callable, "line": self.line, "col": self.col, "status": self.status,
                "max_abs_diff": self.max_abs_diff, "reason": self.reason}

    def message(self, hand: bool = False) -> str:
        """``hand``: the migration checked is the user's (``--verify-against``), not the tool's."""
        if self.status == VERIFIED:
            note = f" ({self.reason})" if self.reason else ""
            return f"verified {self.callable}: max |diff| {_number(self.max_abs_diff)}{note}"
        if self.status == DIFFERS:
            if hand:
                return f"differs {self.callable}: {self.reason}. The migrated code does not compute what the original did"
            return (f"differs {self.callable}: {self.reason}. The migration changed what this code computes; "
                    "the file is not written: please report it to tf-grl-migrate")
        return f"not verifiable {self.callable}: {self.reason}; test this site by hand"

    def diagnostic(self, hand: bool = False):
        from .report import Diagnostic

        return Diagnostic(self.line, self.col, CODE_OF[self.status], self.message(hand))


def _number(x) -> str:
    return "0" if not x else f"{x:.3g}"


# ---------------------------------------------------------------------------------------------
# Workers


class _Worker:
    """One worker process (``python -m tf_grl_migrate.verify_worker MODE``): TensorFlow imported
    once, then one JSON request and one JSON answer a line. Killed and started again after a
    request that runs past its time."""

    def __init__(self, mode: str, python: str, folder: str):
        self.mode, self.python, self.folder = mode, python, folder
        self.proc = None
        self.broken = None  # why it could not start: every request gets that answer, none starts it again

    def _start(self, timeout) -> bool:
        env = dict(os.environ)
        env.update({"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1", "TMPDIR": self.folder,
                    "PYTHONDONTWRITEBYTECODE": "1", "TF_ENABLE_ONEDNN_OPTS": "0",
                    "PYTHONPATH": os.pathsep.join(p for p in [_package_root(), env.get("PYTHONPATH", "")] if p)})
        try:
            self.proc = subprocess.Popen(
                [self.python, "-m", "tf_grl_migrate.verify_worker", self.mode, str(MEMORY_CAP)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self.folder, env=env,
                text=True, bufsize=1)
        except OSError as exc:
            self.broken = f"the verification worker could not be started with {self.python}: {exc.strerror or exc}"
            return False
        hello = self._read(timeout + 120)  # TensorFlow's import
        if hello is None or "tensorflow" not in hello:
            self.stop()
            self.broken = (hello.get("error") if hello else None) or (
                "the verification worker did not start (is TensorFlow installed for this Python?)")
            return False
        return True

    def _read(self, timeout):
        box: queue.Queue = queue.Queue()
        thread = threading.Thread(target=lambda: box.put(self.proc.stdout.readline()), daemon=True)
        thread.start()
        try:
            line = box.get(timeout=timeout)
        except queue.Empty:
            return None
        if not line:
            return {"error": "the worker ended unexpectedly (out of memory, or a crash in TensorFlow)"}
        try:
            return json.loads(line)
        except ValueError:
            return {"error": "the worker wrote something that is not an answer: " + line[:200]}

    def ask(self, request: dict, timeout: float) -> dict:
        """The worker's answer, or a not-verifiable one saying why there is none (never raises)."""
        if self.broken is None and (self.proc is None or self.proc.poll() is not None):
            self._start(timeout)
        if self.broken is not None:
            return {"status": NOT_VERIFIABLE, "reason": self.broken}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self._read(timeout)
        if answer is None:
            self.stop()
            return {"status": NOT_VERIFIABLE, "reason": f"timed out after {timeout:g} s (--verify-timeout)"}
        if "error" in answer and "status" not in answer:
            self.stop()
            return {"status": NOT_VERIFIABLE, "reason": answer["error"]}
        return answer

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.proc = None


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Job(NamedTuple):
    """One file to verify: the original text under TF1, the migrated text under TF2. ``path`` is
    the original's (its folder is where the project's modules it imports are found)."""

    path: str
    original: str
    migrated: str | None  # None: take every site of the original (--verify-against gives `against`)
    against: str | None = None  # --verify-against: the hand-migrated text (another file)
    against_path: str | None = None


def verify(jobs: list, *, workers: int = 1, timeout: float | None = None, python: str | None = None,
           roots=()) -> dict:
    """{path: [Verification, ...]} for each job, in site order. Starts up to ``workers`` TF1 and as
    many TF2 worker processes (only when some probe needs running). Under TF2, a project module
    that the run migrated is loaded as migrated."""
    python = python or sys.executable
    timeout = timeout or DEFAULT_TIMEOUT
    migrated = {os.path.abspath(j.path): j.migrated for j in jobs if j.against is None and j.migrated is not None}
    results: dict = {}
    tasks = []
    parsed = [precheck.parse(job.original) for job in jobs]
    others = [t for t in parsed if t is not None]
    for job, tree in zip(jobs, parsed):
        results[job.path] = []
        if tree is None:
            continue
        new_text = job.against if job.against is not None else job.migrated
        try:
            found = probes.plan(job.original, None if job.against is not None else job.migrated,
                                [t for t in others if t is not tree])
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            results[job.path].append(Verification(1, 1, "<module>", NOT_VERIFIABLE, None,
                                                  f"the migrated text does not parse: {exc}"))
            continue
        for probe in found:
            tasks.append((job, new_text, probe))
    outcomes = _run(tasks, workers, timeout, python, roots, migrated)
    for (job, _, probe), per_site in zip(tasks, outcomes):
        for (line, col), (status, diff, reason, label) in zip(probe.sites, per_site):
            results[job.path].append(Verification(line, col, label, status, diff, reason))
    for path in results:
        results[path].sort()
    return results


def _run(tasks, workers, timeout, python, roots, migrated) -> list:
    outcomes: list = [None] * len(tasks)
    runnable = [i for i, (_, _, probe) in enumerate(tasks) if probe.reason is None or any(probe.fallbacks)]
    for i, (_, _, probe) in enumerate(tasks):
        if i not in runnable:
            outcomes[i] = [(NOT_VERIFIABLE, None, probe.reason, _shown(probe.label, None))] * len(probe.sites)
    if not runnable:
        return outcomes
    count = max(1, min(workers, len(runnable), MAX_WORKERS))
    with tempfile.TemporaryDirectory(prefix="tf-grl-verify-") as folder:
        migrated = _written_once(migrated, folder)
        pools = {mode: queue.Queue() for mode in ("tf1", "tf2")}
        made = []
        for mode in pools:
            for _ in range(count):
                w = _Worker(mode, python, folder)
                made.append(w)
                pools[mode].put(w)
        pending: queue.Queue = queue.Queue()
        for i in runnable:
            pending.put(i)

        def drive():
            while True:
                try:
                    i = pending.get_nowait()
                except queue.Empty:
                    return
                outcomes[i] = _one(tasks[i], pools, timeout, roots, migrated)

        threads = [threading.Thread(target=drive, daemon=True) for _ in range(count)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            for w in made:
                w.stop()
    return outcomes


def _written_once(texts: dict, folder: str) -> dict:
    """{original path: a file in ``folder`` holding its migrated text}: the project modules a
    TF2 worker may import as this run migrated them, written once (not sent with every request)."""
    files = {}
    for i, (path, text) in enumerate(sorted(texts.items())):
        target = os.path.join(folder, "migrated", str(i), os.path.basename(path))
        os.makedirs(os.path.dirname(target))
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        files[path] = target
    return files


def _one(task, pools, timeout, roots, migrated) -> list:
    """[(status, max |diff|, reason, label)] per site of the probe: its callable, or, where that
    cannot run, each site's block alone."""
    job, new_text, probe = task
    if probe.reason is None:
        outcome, ran = _exercise(job, new_text, probe, pools, timeout, roots, migrated)
        if (ran and outcome[0] != NOT_VERIFIABLE) or not any(probe.fallbacks):
            return [outcome] * len(probe.sites)
        why = f"{outcome[3]} could not be exercised ({outcome[2]})"
    else:
        outcome = (NOT_VERIFIABLE, None, probe.reason, _shown(probe.label, None))
        why = f"{outcome[3]}: {probe.reason}"
    out = []
    for alone in probe.fallbacks or [None] * len(probe.sites):
        if alone is None:
            out.append(outcome)
            continue
        result, ran = _exercise(job, new_text, alone, pools, timeout, roots, migrated)
        if not ran:
            out.append(outcome)  # the callable's reason says more than the block's
            continue
        status, diff, reason, label = result
        note = f"the override block alone: {why}"
        out.append((status, diff, f"{reason}; {note}" if reason else note, label))
    return out


def _exercise(job, new_text, probe, pools, timeout, roots, migrated):
    """((status, max |diff|, reason, label), whether TF1 ran it)."""
    request = {"entry": probe.entry, "shapes": [list(s) for s in probes.SHAPES], "roots": list(roots)}
    reference = _ask(pools, "tf1", {**request, "path": job.path, "source": job.original}, timeout)
    if reference.get("status") != "ok":
        return (NOT_VERIFIABLE, None, "under TF1: " + reference.get("reason", "no answer"),
                _shown(probe.label, None)), False
    label = _shown(probe.labels[reference["variant"]], reference["shape"])
    if "{init}" in label:
        label = label.replace("{init}", probe.entry["made"][1 if reference.get("new") else 0])
    new_path = job.against_path or job.path
    written = probes.written_lines(job.original, new_text) if job.against is None else None
    answer = _ask(pools, "tf2", {**request, "path": new_path, "source": new_text, "reference": reference,
                                 "migrated": migrated if job.against is None else {}, "written": written,
                                 "tolerance": {"forward": FORWARD_TOL, "gradient": GRADIENT_TOL}}, timeout)
    status = answer.get("status", NOT_VERIFIABLE)
    reason = answer.get("reason")
    if status == DIFFERS and job.against is None:
        status, reason = _attributed(job, new_text, request, reference, reason, pools, timeout)
    if status == NOT_VERIFIABLE and reason:
        reason = "under TF2: " + reason
    if status == VERIFIED:
        notes = [n for n in (reference.get("note"), answer.get("note")) if n]
        reason = "; ".join(notes) or None
    return (status, answer.get("max_abs_diff"), reason, label), True


def _ask(pools, mode, request, timeout) -> dict:
    """One request to a free worker of ``mode`` (TF1 or TF2)."""
    worker = pools[mode].get()
    try:
        return worker.ask(request, timeout)
    finally:
        pools[mode].put(worker)


def _attributed(job, new_text, request, reference, reason, pools, timeout):
    """(status, reason) for a TF2 result that is not TF1's: the migration's only if the migrated
    code under TF1 semantics is not the original's either. Where it is (the same values), TF2 means
    something else by code the migration did not change (``softmax_cross_entropy_with_logits``
    backpropagates into its labels in TF2): that is no wrong rewrite, and the site is not verifiable."""
    same = _ask(pools, "tf1", {**request, "path": job.path, "source": new_text, "compare_to": reference,
                               "tolerance": {"forward": FORWARD_TOL, "gradient": GRADIENT_TOL}}, timeout)
    if same.get("status") != "same":
        return DIFFERS, reason
    return NOT_VERIFIABLE, (f"{reason}; but the migrated code under TF1 semantics gives the original's values, so "
                            "the difference is TF2's meaning for code the migration did not change (other TF1 API "
                            "whose meaning changed in TF2); check those calls by hand")


def _shown(label, shape) -> str:
    return label.replace("{shape}", ",".join(map(str, shape)) if shape else "?").replace("{init}", "(...)")


# ---------------------------------------------------------------------------------------------
# Reports: --verify over a run's reports, --verify-against over two trees


def verify_reports(reports, roots, *, write: bool = False, use_runtime: bool = False, jobs: int = 1,
                   timeout: float | None = None, cache=None, python: str | None = None) -> None:
    """Verify every changed file of a run (``report.new_text`` holds its migrated text): fill
    ``report.verification``, add the GRL3xx diagnostics, and with ``write`` write each file none of
    whose sites differs (never one that changed on disk since it was read)."""
    from .files import read

    work = []
    for report in reports:
        if not report.changed or report.new_text is None:
            continue
        raw, failure = read(report.path)
        if failure is not None:
            report.diagnostics.extend(failure.diagnostics)
            continue
        try:
            original, place = _original(report.path, raw)
        except (SyntaxError, UnicodeDecodeError, LookupError, ValueError):
            continue
        work.append((report, raw, original, place))
    todo = [Job(r.path, original, r.new_text) for r, _, original, _ in work]
    found = _cached(todo, cache, python, lambda jobs_: verify(
        jobs_, workers=jobs, timeout=timeout, python=python, roots=_folders(roots)))
    for report, raw, _, place in work:
        report.verification = found.get(report.path, [])
        report.diagnostics.extend(place(v.diagnostic()) for v in report.verification)
        if write and not report.differs:
            _write_verified(report, raw, use_runtime)


def _original(path, raw):
    """The text verification runs (a notebook's glued code cells) and how a diagnostic of it is
    placed (a notebook's names its cell)."""
    from .files import decode

    if not path.endswith(".ipynb"):
        return decode(raw).text, lambda d: d
    from . import notebooks

    glued, indices, _, _ = notebooks.glue(notebooks.load(raw.decode("utf-8")))

    def place(d):
        cell, line = notebooks.cell_of_line(glued, indices, d.line)
        return d._replace(line=line, cell=cell)

    return glued, place


def _write_verified(report, raw, use_runtime) -> None:
    from .files import FileChangedError, decode, process_file, write_atomic
    from .report import Diagnostic

    if report.path.endswith(".ipynb"):  # the notebook layer writes the cells back (the same result again)
        again = process_file(report.path, True, False, use_runtime, raw)
        report.written = again.written
        report.diagnostics.extend(d for d in again.diagnostics if d.code in ("GRL905", "GRL906"))
        return
    try:
        write_atomic(report.path, report.new_text.encode(decode(raw).encoding), expected=raw)
        report.written = True
    except (OSError, UnicodeEncodeError, FileChangedError) as exc:
        report.diagnostics.append(Diagnostic(1, 1, "GRL905", f"cannot write: {exc}"))


def _folders(paths) -> list:
    return sorted({os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths})


def _cached(jobs, cache, python, compute) -> dict:
    """Results from the cache where both texts, the tool, TensorFlow's version and every project
    module the run would load are as before; the rest computed and stored."""
    if cache is None or not jobs:
        return compute(jobs)
    version = tensorflow_version(python)
    keys = {}
    found = {}
    todo = []
    for job in jobs:
        data = "\0".join([job.original, job.migrated or "", job.against or "", version, _neighbours(job.path)])
        key = cache.key(data.encode("utf-8", "surrogatepass"), False, "verify")
        keys[job.path] = key
        stored = cache.get_data(key)
        if stored is not None:
            try:
                found[job.path] = [Verification(*v) for v in stored]
                continue
            except TypeError:
                pass
        todo.append(job)
    if todo:
        computed = compute(todo)
        for job in todo:
            results = computed.get(job.path, [])
            found[job.path] = results
            if not any(v.status == NOT_VERIFIABLE and v.reason and "timed out" in v.reason for v in results):
                cache.put_data(keys[job.path], [list(v) for v in results])
    return found


def _neighbours(path) -> str:
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


def verify_against(original: str, path: str, *, jobs: int = 1, timeout: float | None = None,
                   python: str | None = None) -> list:
    """``--verify-against ORIGINAL PATH``: every override site of the TF1 code ``original`` (a file,
    or a directory matched by relative path) checked against the callable of the same name in the
    migrated ``path``. One FileReport per original file that holds a site; nothing is written."""
    from .files import discover, read
    from .report import Diagnostic, FileReport

    pairs = []
    if os.path.isdir(original) != os.path.isdir(path):
        raise ValueError("ORIGINAL and PATH must both be files or both be directories")
    if os.path.isdir(original):
        for old in discover([original]):
            if old.endswith(".py"):
                pairs.append((old, os.path.join(path, os.path.relpath(old, original))))
    else:
        pairs.append((original, path))
    reports, work = [], []
    for old, new in pairs:
        raw, failure = read(old)
        if failure is not None:
            reports.append(failure)
            continue
        try:
            text, place = _original(old, raw)
        except (SyntaxError, UnicodeDecodeError, LookupError, ValueError) as exc:
            reports.append(FileReport(old, diagnostics=[Diagnostic(1, 1, "GRL901", f"cannot decode: {exc}")]))
            continue
        if probes.MARKER not in text:
            continue
        report = FileReport(old)  # the sites are the original's: its lines
        reports.append(report)
        raw_new, failure = read(new)
        if failure is not None:
            report.diagnostics.append(failure.diagnostics[0]._replace(
                message=f"the migrated file {new}: {failure.diagnostics[0].message}"))
            continue
        try:
            new_text, _ = _original(new, raw_new)
        except (SyntaxError, UnicodeDecodeError, LookupError, ValueError) as exc:
            report.diagnostics.append(Diagnostic(1, 1, "GRL901", f"cannot decode: {exc}"))
            continue
        work.append((report, place, Job(old, text, None, new_text, new)))
    found = verify([job for _, _, job in work], workers=jobs, timeout=timeout, python=python,
                   roots=_folders([original]))
    for report, place, job in work:
        report.verification = found.get(job.path, [])
        report.diagnostics.extend(place(v.diagnostic(hand=True)) for v in report.verification)
    return reports
