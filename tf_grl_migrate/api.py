"""The stable Python API, also what the command line is built on. Never imports TensorFlow
(nor libcst, until a file needs analysing).

    from tf_grl_migrate import migrate_source, migrate_paths

    result = migrate_source(code, use_runtime=False)
    result.code, result.changed, [(d.code, d.line, d.col, d.message) for d in result.diagnostics]

    for report in migrate_paths(["src/"], write=False):
        report.path, report.changed, report.written, report.diagnostics, report.diff

Neither raises for a bad file: what could not be read, decoded, parsed or written becomes a
diagnostic of that file (codes GRL9xx; see ``tf_grl_migrate.codes.CODES``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, cast

from .migrator.signatures import signature_or_none
from .report import Diagnostic, FileReport

if TYPE_CHECKING:
    from .migrator.cache import Cache
    from .migrator.facts import Links, ModuleFacts

__all__ = ["Diagnostic", "FileReport", "MigrationResult", "explain", "migrate_paths", "migrate_source", "verify_port"]


class MigrationResult(NamedTuple):
    """The migrated text and the diagnostics (sorted by line, column and code)."""

    code: str
    diagnostics: list[Diagnostic]
    original: str

    @property
    def changed(self) -> bool:
        return self.code != self.original


def migrate_source(source: str, *, use_runtime: bool = False, path: str = "<string>") -> MigrationResult:
    """Migrate one module's source text; ``source`` is returned unchanged where nothing can be
    migrated or the text cannot be parsed (then a GRL902 diagnostic says where; a text that does
    not mention ``gradient_override_map`` at all is not parsed, it has nothing to migrate).

    ``use_runtime``: exact gradient reversals call ``tf_grl_migrate.flip_gradient`` and a module
    that only holds the DANN builder re-exports the shim's, instead of inline
    ``@tf.custom_gradient`` code. ``path`` only names the text in messages."""
    from .migrator.files import migrate_text

    if not isinstance(source, str):
        raise TypeError(f"migrate_source takes the source as str, got {type(source).__name__} (decode bytes first)")
    new, report = migrate_text(path, source, use_runtime)
    return MigrationResult(new, sorted(report.diagnostics), source)


def migrate_paths(
    paths: Iterable[str | os.PathLike],
    *,
    write: bool = False,
    use_runtime: bool = False,
    diff: bool = False,
    exclude: str | None = None,
    extend_exclude: str | None = None,
    jobs: int | None = 1,
    cache: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
    verify: bool = False,
    verify_timeout: float | None = None,
    inputs: dict[str, list[int] | None] | None = None,
) -> list[FileReport]:
    """Migrate every ``.py`` / ``.ipynb`` file under ``paths`` (directories are walked with the
    default excludes, or ``exclude`` / ``extend_exclude`` regular expressions; named files are
    always processed); one :class:`FileReport` per file, in path order.

    ``write`` rewrites files in place (atomically; encoding, BOM and newlines kept); ``diff`` fills
    ``report.diff`` with a unified diff; ``jobs`` worker processes (None: every core); ``cache``
    answers files seen before from the result cache (``TF_GRL_MIGRATE_CACHE_DIR``);
    ``on_progress(done, total)`` is called once with done=0 when the files are known, then once per
    file done (a progress bar). A path that does
    not exist is reported as a GRL901 failure of that path.

    ``verify`` exercises every migrated site numerically, the original under TF1 semantics and the
    migrated code under TF2 (worker processes import TensorFlow; this one never does): each
    report's ``verification`` lists the sites' outcomes, also as GRL301-303 diagnostics, and with
    ``write`` a file with a site that differs is not written. ``verify_timeout``: seconds per site
    and side (default ``verifier.DEFAULT_TIMEOUT``).

    ``inputs``, where given (with ``cache``), gets what the reports rest on: the absolute path of
    each folder listed and file read -> its signature (``migrator.signatures``) taken before
    it was, or None where none could be taken."""
    from .migrator.files import discover

    names: list[str] = [str(os.fspath(p)) for p in paths]
    missing = [FileReport(p, diagnostics=[Diagnostic.said((1, 1), "GRL901", "cannot_read",
                                                                   error="no such file or directory")])
               for p in names if not os.path.exists(p)]
    files = discover([p for p in names if os.path.exists(p)], exclude, extend_exclude, inputs)
    store = None
    if cache:
        from .migrator.cache import Cache

        store = Cache()
    done = [0]
    if on_progress is not None:
        on_progress(0, len(files))

    def on_file() -> None:
        done[0] += 1
        if on_progress is not None:
            on_progress(done[0], len(files))

    jobs = min(jobs or os.cpu_count() or 1, os.cpu_count() or 1)  # more processes than cores only wait
    reports = run_all(files, write and not verify, diff, use_runtime, jobs, on_file, store, names, keep_text=verify,
                      inputs=inputs)
    if verify:
        _verify(reports, names, write=write, use_runtime=use_runtime, jobs=jobs, timeout=verify_timeout, cache=store)
    return sorted(missing + reports, key=lambda r: r.path) if missing else reports


def verify_port(original: str, path: str, *, jobs: int = 1, timeout: float | None = None,
                python: str | None = None, pairs: Iterable[tuple[str, str]] = ()) -> list[FileReport]:
    """``--verify-against ORIGINAL PATH``: every override site of the TF1 code ``original`` (a file,
    or a directory matched by relative path) checked against the port ``path``, through each
    module-level name of the original that reaches the site and that the port defines too
    (``pairs``: (original's name, port's name) to pair by hand, ``--verify-call``). One
    FileReport per original file that holds a site; nothing is written. Raises ValueError when one
    of the two is a directory and the other is not."""
    from .migrator.files import discover
    from .migrator.precheck import may_hold_override
    from .verifier import Job, verify_cached

    if os.path.isdir(original) != os.path.isdir(path):
        raise ValueError("ORIGINAL and PATH must both be files or both be directories")
    if os.path.isdir(original):
        work_pairs = [(old, os.path.join(path, os.path.relpath(old, original)))
                      for old in discover([original]) if old.endswith(".py")]
    else:
        work_pairs = [(original, path)]
    reports, work = [], []
    for old, new in work_pairs:
        legacy = _read_text(old)
        if isinstance(legacy, FileReport):
            reports.append(legacy)
            continue
        text, place = legacy
        if not may_hold_override(text):
            continue  # no override of either kind
        report = FileReport(old)  # the sites are the original's: its lines
        reports.append(report)
        port = _read_text(new)
        if isinstance(port, FileReport):
            said = port.diagnostics[0]  # GRL901 or GRL907: each says it of the port too ("port")
            report.diagnostics.append(Diagnostic.said((1, 1), said.code, "port", path=new, why=said.message))
            continue
        work.append((report, place, Job(old, text, None, port[0], new, tuple(pairs))))
    _placed(work, verify_cached([job for _, _, job in work], [original], workers=jobs, timeout=timeout,
                                python=python), hand=True)
    return reports


def _verify(reports: list[FileReport], roots: list[str], *, write: bool, use_runtime: bool,
            jobs: int, timeout: float | None, cache: Cache | None, python: str | None = None) -> None:
    """``migrate_paths(verify=True)``: verify each changed file of the run, the text it was
    migrated from (``report.source``) against its migrated text (``report.new_text``): fill
    ``report.verification``, add the GRL3xx diagnostics, and with ``write`` write each file none
    of whose sites differs, only if it still holds those bytes."""
    from .migrator.files import write_verified
    from .verifier import Job, verify_cached

    work = []
    for report in reports:
        if report.changed and report.new_text is not None and report.source is not None:
            decoded = _decoded(report.path, report.source)  # decoded once already, by the migration
            if not isinstance(decoded, FileReport):
                work.append((report, decoded[1], Job(report.path, decoded[0], report.new_text)))
    _placed(work, verify_cached([job for _, _, job in work], roots, cache=cache, workers=jobs, timeout=timeout,
                                python=python))
    for report, _, _ in work:
        if write and report.source is not None and not report.differs:
            write_verified(report, report.source, use_runtime)


def _placed(work: list[tuple[FileReport, Callable[[Diagnostic], Diagnostic], Any]], found: dict,
            hand: bool = False) -> None:
    """Each report's verifications (``found``, by path) and their diagnostics, placed (a notebook's
    in their cells). ``hand``: the port checked is the user's (--verify-against)."""
    for report, place, job in work:
        report.verification = found.get(job.path, [])
        report.diagnostics.extend(place(v.diagnostic(hand)) for v in report.verification)


def _read_text(path: str) -> tuple[str, Callable[[Diagnostic], Diagnostic]] | FileReport:
    """(a file's code as text, how a diagnostic of that text is placed), or the report of why the
    file cannot be read or decoded."""
    from .migrator.files import read

    raw, failure = read(path)
    return failure if failure is not None else _decoded(path, raw)


def _decoded(path: str, raw: bytes) -> tuple[str, Callable[[Diagnostic], Diagnostic]] | FileReport:
    from .migrator.files import DECODE_ERRORS, cannot_decode, text_of

    try:
        return text_of(path, raw)
    except (*DECODE_ERRORS, ValueError) as exc:  # ValueError: a notebook's JSON
        return cannot_decode(path, exc)


def _process(args: tuple) -> FileReport:
    from .migrator.files import process_file

    path, write, want_diff, use_runtime, raw, cache, links, keep_text = args
    return process_file(path, write, want_diff, use_runtime, raw, cache, links=links, keep_text=keep_text)


def run_all(paths: list[str], write: bool, want_diff: bool, use_runtime: bool, jobs: int, on_file: Callable[[], None],
            cache: Cache | None = None, roots: Iterable[str] = (), keep_text: bool = False,
            inputs: dict[str, list[int] | None] | None = None) -> list[FileReport]:
    """Read every file here (cheap) and answer what the cache already knows; hand the rest to a
    process pool as soon as the first turns up, so the workers import libcst and analyse while
    reading goes on. Then link the modules whose overrides use another module's registration
    (facts.Run) and settle those together, replacing their reports. With ``write`` nothing is
    handed out before the links are known (a linked file must not be written alone). Results in
    path order. ``inputs``: as migrate_paths', for the files."""
    from .migrator.facts import Links, star_imported
    from .migrator.files import NotCached, process_file

    STARRED = Links(star_imported=True)
    starred: set = set()

    reports: list[FileReport | None] = [None] * len(paths)
    counted = set()

    def done(i: int) -> None:  # once per file, as its report is known
        if i not in counted:
            counted.add(i)
            on_file()

    known: dict = {}  # index -> (links, report) the cache holds (set below, read by hand_out)
    pool = _Pool(jobs)

    def hand_out(i: int, raw: bytes) -> None:
        path = paths[i]
        links = STARRED if path in starred else None  # its module-level names are handed on: cached apart
        if not write and i in known and known[i][0] is links:
            reports[i] = known[i][1]
        else:
            try:
                reports[i] = process_file(path, write, want_diff, use_runtime, raw, cache, compute=False,
                                          links=links, keep_text=keep_text)
            except NotCached:
                pool.submit(i, (path, write, want_diff, use_runtime, raw, cache, links, keep_text))
                return
        done(i)

    try:
        candidates, stars = _read_all(paths, cache, reports, done, inputs)
        # What the cache knows of each candidate, star-imported or not: being star-imported changes
        # only which dead module-level names a migration removes, so a module left unchanged either
        # way cannot lose a name another imports; only the others, changed or not known yet, are
        # looked for among the star-imports.
        known = _known(paths, candidates, cache, (None, STARRED), want_diff, use_runtime, keep_text)
        wanted = {paths[i] for i in candidates if i not in known or known[i][1].changed}
        starred = star_imported(paths, list(roots or paths), stars, wanted) if stars and wanted else set()
        if not write:
            for i, raw in candidates.items():
                hand_out(i, raw)
        linked = _linked_reports(paths, roots or paths, candidates, write, want_diff, use_runtime, cache, keep_text,
                                 starred, wanted)
        if write:
            for i, raw in candidates.items():
                if i not in linked:
                    hand_out(i, raw)
        for i, args in pool.work:
            if i not in linked:
                reports[i] = pool.result(i, args)
                done(i)
        for i, report in linked.items():
            reports[i] = report
            done(i)
    finally:
        pool.close()
    return cast("list[FileReport]", reports)  # every file's report is set above


class _Pool:
    """The files that need libcst: analysed in a process pool, started with the first of them
    (``jobs`` > 1: the workers import libcst while reading goes on), or here."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.futures: dict[int, Any] = {}  # index -> the pool's Future
        self.pool: Any = None  # a ProcessPoolExecutor, made for the first file that needs one
        self.work: list[tuple[int, tuple]] = []  # (index, process_file's arguments)

    def submit(self, i: int, args: tuple) -> None:
        self.work.append((i, args))
        if self.jobs > 1:
            if self.pool is None:
                from concurrent.futures import ProcessPoolExecutor  # only runs with work to do pay

                self.pool = ProcessPoolExecutor(max_workers=self.jobs)
            self.futures[i] = self.pool.submit(_process, args)

    def result(self, i: int, args: tuple) -> FileReport:
        return self.futures[i].result() if i in self.futures else _process(args)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _read_all(paths: list[str], cache: Cache | None, reports: list[FileReport | None],
              done: Callable[[int], None], inputs: dict[str, list[int] | None] | None = None) -> tuple[dict, dict]:
    """Read every file once: (index -> bytes of each file that may hold an override, path ->
    bytes of each module that may star-import another); every other file's report is set here.
    A file the cache's quiet index vouches for is not read (migrator/cache.py, ``quiet``); one
    changed moments ago is read again next time (``settled``).
    ``inputs`` gets each file's signature, taken before it is read (needs ``cache``)."""
    import time

    from .migrator.facts import STAR_IMPORT
    from .migrator.files import read
    from .migrator.precheck import may_hold_override_bytes
    from .migrator.signatures import settled

    candidates, stars = {}, {}
    started = time.time_ns()
    quiet = cache.quiet() if cache is not None else {}
    still_quiet: dict = {}
    seen: set = set()
    folders: dict = {}  # folder -> its absolute path: normalised once per folder, not per file
    for i, path in enumerate(paths):
        where, signed = _signature(path, folders) if cache is not None else (None, None)
        seen.add(where)
        if inputs is not None:
            inputs[where or path] = signed
        if signed is not None and quiet.get(where) == signed:
            still_quiet[where] = signed
            reports[i] = FileReport(path)
            done(i)
            continue
        raw, failure = read(path)
        starred_here = raw is not None and path.endswith(".py") and STAR_IMPORT.search(raw)
        if starred_here:
            stars[path] = raw
        if failure is not None or not may_hold_override_bytes(raw):
            if failure is None and not starred_here and signed is not None and settled(signed, started):
                still_quiet[where] = signed
            reports[i] = failure or FileReport(path)
            done(i)
            continue
        candidates[i] = raw
    if cache is not None:  # what this run saw replaces what the index said of the same files
        index = {k: v for k, v in quiet.items() if k not in seen} | still_quiet
        if index != quiet:
            cache.put_quiet(index)
    return candidates, stars


def _known(paths: list[str], candidates: dict[int, bytes], cache: Cache | None, settings: tuple,
           want_diff: bool, use_runtime: bool, keep_text: bool) -> dict:
    """index -> (links, report) of each candidate the cache answers under one of ``settings``
    (links: not star-imported, then star-imported)."""
    from .migrator.files import NotCached, process_file

    known: dict = {}
    for i, raw in candidates.items() if cache is not None else ():
        for links in settings:
            try:
                known[i] = links, process_file(paths[i], False, want_diff, use_runtime, raw, cache,
                                               compute=False, links=links, keep_text=keep_text)
                break
            except NotCached:
                pass
    return known


def _signature(path: str, folders: dict) -> tuple[str | None, list[int] | None]:
    """(the absolute path, its signature) of a file; (None, None) if it cannot be looked at.
    ``folders`` remembers each folder's absolute path."""
    found = signature_or_none(path)
    if found is None:
        return None, None
    folder, name = os.path.split(path)
    where = folders.get(folder)
    if where is None:
        where = folders[folder] = os.path.abspath(folder)
    return os.path.join(where, name), found


def _linked_reports(paths: list[str], roots: Iterable[str], candidates: dict[int, bytes], write: bool,
                    want_diff: bool, use_runtime: bool, cache: Cache | None = None, keep_text: bool = False,
                    starred: frozenset | set = frozenset(), wanted: Collection[str] | None = None) -> dict:
    """Reports for the modules taking part in a link between modules (a registration in one, its
    use in another), settled together: both ends are migrated, or both stay with a diagnostic.
    Each round migrates the linked modules in memory and collects the links one end cannot keep;
    those are blocked and the round runs again, until nothing new is blocked. Only then are the
    files written. Empty for a run without such links (each module's facts come from the result
    cache when its bytes were seen before). A module whose Defuns make functions another module
    uses as only TF1's function object can be used (facts.ForeignUse) is linked too, so that it
    hears of those uses. ``wanted``: the modules the run may change (None: all); only those are
    looked at for such uses."""
    from .migrator.facts import MODULE_LEVEL_DEFUN
    from .migrator.precheck import may_link

    several = len(paths) > 1
    py = [i for i in candidates if paths[i].endswith(".py") and may_link(candidates[i])] if several else []
    defining = [paths[i] for i in candidates if several and paths[i].endswith(".py")
                and (wanted is None or paths[i] in wanted) and MODULE_LEVEL_DEFUN.search(candidates[i])]
    if not py and not defining:
        return {}
    import dataclasses

    from .migrator import facts
    from .migrator.files import DECODE_ERRORS, decode, process_file, read

    def facts_of(path: str, raw: bytes) -> ModuleFacts | None:
        key = cache.key(raw, False, "facts") if cache is not None else ""
        stored = cache.get_data(key) if cache is not None else None
        if stored is not None:
            return None if stored == "unparsable" else facts.from_json(path, stored)
        try:
            found = facts.gather(path, decode(raw).text)
        except DECODE_ERRORS:  # (SyntaxError among them: a module that does not parse)
            found = None
        if cache is not None:
            cache.put_data(key, "unparsable" if found is None else facts.to_json(found))
        return found

    def read_facts(path: str) -> ModuleFacts | None:
        raw, failure = read(path)
        return None if failure else facts_of(path, raw)

    users = {paths[i]: found for i in py if (found := facts_of(paths[i], candidates[i])) is not None}
    run = facts.Run(paths, list(roots), users, read_facts)
    blocked: dict = {}

    made = run.defun_functions(defining) if defining else {}
    held = {paths[i]: raw for i, raw in candidates.items()}  # read already: not read again
    calls = _foreign_uses(run, made, cache, held) if made else {}

    def slices() -> dict[str, Links]:  # each module's slice of the links, and whether the run star-imports it
        found = run.links(blocked)
        for path, uses in calls.items():
            found[path] = dataclasses.replace(found.get(path, facts.Links()), foreign_uses=uses)
        return {path: dataclasses.replace(slice_, star_imported=path in starred) for path, slice_ in found.items()}

    links = slices()
    for _ in range(len(run.facts) + 1):
        new = {}
        for path, slice_ in links.items():
            kept: dict = {}
            process_file(path, False, False, use_runtime, None, None, links=slice_, blocked=kept)
            for (reg_path, function), why in kept.items():
                key = (reg_path or path, function)
                if key not in blocked:
                    new[key] = (path, why)
        if not new:
            break
        blocked.update(new)
        links = slices()
    index = {p: i for i, p in enumerate(paths)}
    return {index[path]: process_file(path, write, want_diff, use_runtime, None, None, links=slice_,
                                      keep_text=keep_text)
            for path, slice_ in links.items() if path in index}


def _foreign_uses(run: Any, made: dict[str, set[str]], cache: Cache | None,
                  held: dict[str, bytes]) -> dict[str, tuple]:
    """``run.foreign_uses(made, ...)``, reading only the files that changed since a run looking
    for uses of the same functions found that their bytes rule one out (the cache remembers their
    signatures, settled ones only, as the quiet index does); ``held``: bytes the run has already."""
    import time

    from .migrator.files import read
    from .migrator.signatures import settled

    # the same functions, and the same files in the run (an added one can make an import resolve)
    asked = repr([sorted((p, sorted(n)) for p, n in made.items()), sorted(run.paths)]).encode()
    key = cache.key(asked, False, "defun-uses") if cache is not None else ""
    stored = cache.get_data(key) if cache is not None else None
    before = stored if isinstance(stored, dict) else {}
    now: dict = {}
    read_at: dict = {}  # path -> (absolute path, signature) of a file read, settled when read
    folders: dict = {}
    started = time.time_ns()

    def read_raw(path: str) -> bytes | None:
        if path in held:  # read before this signature could be taken: answered, never vouched for
            return held[path]
        where, signed = _signature(path, folders) if cache is not None else (None, None)
        if signed is not None and before.get(where) == signed:
            now[where] = signed  # its bytes ruled a use out then, and they are the same now
            return None
        if signed is not None and settled(signed, started):
            read_at[path] = (where, signed)
        return read(path)[0]

    def passed(path: str) -> None:
        if path in read_at:
            where, signed = read_at[path]
            now[where] = signed

    found = run.foreign_uses(made, read_raw, passed)
    if cache is not None and now != before:
        cache.put_data(key, now)
    return found


def explain(code: str) -> str:
    """What ``tf-grl-migrate --explain CODE`` prints: the code's title, explanation and messages
    (all from the table of codes), the idiom that owns it (what that idiom is), and its example
    with what the tool says on it, message, hints and details.
    Raises KeyError for a code outside the table."""
    import textwrap

    from .codes import TABLE

    entry = TABLE[code]
    lines = [f"{code}: {entry.title}", f"kind: {entry.kind.meaning}", "",
             *textwrap.wrap(entry.explanation, 100, break_on_hyphens=False)]
    if entry.messages:
        lines += ["", "what it says ({names} are filled in where it says it):"]
        lines += [line for sentence in dict.fromkeys(m.sentence for m in entry.messages.values())
                  for line in textwrap.wrap(sentence, 100, initial_indent="- ", subsequent_indent="  ",
                                            break_on_hyphens=False)]
    from .migrator.codemod import migrate_code
    from .migrator.idioms import all_idioms

    owner = next((i for i in all_idioms() if code in i.codes), None)
    if owner is not None:
        lines += ["", f"idiom: {owner.name} ({owner.summary})"]
        example = owner.examples.get(code)
        if example:
            lines += ["", "example:", *(("    " + line).rstrip() for line in example.rstrip("\n").splitlines())]
            said = [d for d in migrate_code(example).diagnostics if d.code == code]
            for d in said[:1]:
                lines += ["", f"the tool says (line {d.line}): {code} {d.sentence}"]
                if d.details:
                    lines += ["", "details:", d.details]
    lines += ["", "more: docs/idioms.md (the table of codes), docs/usage.md"]
    return "\n".join(lines) + "\n"
