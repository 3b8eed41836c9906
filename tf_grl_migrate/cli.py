"""The command line: ``tf-grl-migrate PATH... [--write | --check] [--format json]``.

stdout carries only payload (diffs, migrated stdin, or JSON); diagnostics and the summary go
to stderr. Exit status: 0 done, 1 ``--check`` found work, 2 usage error, 123 a file failed.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Literal, TextIO

import click

from . import __version__, api, report
from .migrator.files import DECODE_ERRORS, cannot_decode, decode, migrate_text
from .rerun import Recorder

PROGRESS_MIN_FILES = 500  # a progress bar on a terminal for runs at least this long
PROGRESS_AFTER_S = 2.0  # ... or for any run still going after this long (one long module)


class _Progress:
    """A progress bar on stderr (a terminal only), opened once a run turns out to have
    PROGRESS_MIN_FILES files or to take more than PROGRESS_AFTER_S seconds. ``update`` comes from
    the run (the first call, done=0, gives the total); a timer thread may open the bar."""

    def __init__(self, enabled: bool, after: float = PROGRESS_AFTER_S, stream: TextIO | None = None) -> None:
        self.enabled, self.total, self.done = enabled, 0, 0
        self.bar: Any = None  # click's progress bar, once shown
        self.stream = stream if stream is not None else sys.stderr
        self.after, self.lock = after, threading.Lock()
        self.timer: threading.Timer | None = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            self.timer = threading.Timer(self.after, self._open)
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            if self.bar is not None:
                self.bar.__exit__(*exc)
        return False

    def _open(self) -> None:
        with self.lock:
            if self.bar is None and self.total:
                self.bar = click.progressbar(length=self.total, label="tf-grl-migrate", file=self.stream,
                                             show_pos=True).__enter__()
                self.bar.update(self.done)

    def update(self, done: int, total: int) -> None:
        with self.lock:
            step, self.done, self.total = done - self.done, done, total
            if self.bar is not None:
                self.bar.update(step)
                return
        if self.enabled and total >= PROGRESS_MIN_FILES and done > 0:
            self._open()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--write", is_flag=True, help="Rewrite files in place (default: dry run, diff on stdout); exit 1 if "
                                            "an override is left that the tool cannot migrate.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file would change or keeps an override "
                                            "the tool cannot migrate.")
@click.option("--use-runtime", is_flag=True, help="Migrate onto this package's runtime instead of inline "
                                                  "tf.custom_gradient code: exact reversals to "
                                                  "tf_grl_migrate.flip_gradient (a DANN builder module to a "
                                                  "re-export), model-wide maps (guided backprop, a map chosen at run "
                                                  "time) to tf_grl_migrate.gradient_override_map, py_func recipes "
                                                  "to tf_grl_migrate.py_func.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: one JSON document on stdout.")
@click.option("--exclude", metavar="REGEX", help="Paths to skip when walking directories (replaces the default).")
@click.option("--extend-exclude", metavar="REGEX", help="More paths to skip, on top of --exclude.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores].")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
@click.option("--no-cache", is_flag=True, help="Analyse every file afresh and store nothing (the cache of results "
                                               "and the records that answer a command repeated on an unchanged "
                                               "tree live in TF_GRL_MIGRATE_CACHE_DIR or ~/.cache/tf-grl-migrate).")
@click.option("--verify", is_flag=True, help="Prove every migrated site: run the original under TF1 semantics and "
                                             "the migrated code under TF2 (eager and tf.function) in worker "
                                             "processes, and compare forward values and gradients. Runs your code "
                                             "(imports and definitions only); needs TensorFlow.")
@click.option("--verify-against", "against", metavar="ORIGINAL", type=click.Path(exists=True),
              help="Check a migration made by hand: every override site of ORIGINAL (TF1 code, a file or a "
                   "directory) against the same-named callable in PATH. Writes nothing.")
@click.option("--verify-call", "calls", metavar="ORIGINAL=PORT", multiple=True,
              help="With --verify-against: reach a site through PORT in the port where the original reaches it "
                   "through ORIGINAL (module-level names; repeatable).")
@click.option("--verify-timeout", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Time limit per site and side for verification [default: 60].")
@click.option("--explain", metavar="CODE", help="Say what a diagnostic code (GRLnnn) means, with its example, "
                                                "and exit.")
@click.version_option(__version__, prog_name="tf-grl-migrate")
def main(paths: tuple[str, ...], write: bool, check: bool, use_runtime: bool, fmt: str, exclude: str | None,
         extend_exclude: str | None, jobs: int | None, quiet: bool, no_cache: bool, verify: bool, against: str | None,
         calls: tuple[str, ...], verify_timeout: float | None, explain: str | None) -> None:
    """Migrate TF1 gradient_override_map code (gradient reversal and friends) to TF2 tf.custom_gradient.

    PATH is a file, a directory (walked for .py files) or - (stdin to stdout).
    """
    if explain is not None:
        from . import codes

        code = explain.strip().upper()
        if code not in codes.CODES:
            raise click.UsageError(f"no code {explain!r}; the codes are {', '.join(sorted(codes.CODES))}")
        click.echo(api.explain(code), nl=False)
        return
    if not paths:
        raise click.UsageError("give at least one PATH (a file, a directory, or - for stdin)")
    if write and check:
        raise click.UsageError("--write and --check exclude each other")
    said: list[tuple[bool, str]] = []  # (to stderr, text) as printed: what a record of the run replays
    jobs = _capped(jobs, quiet, said)
    if calls and against is None:
        raise click.UsageError("--verify-call pairs names for --verify-against")
    if against is not None:
        pairs = [_pair(c) for c in calls]
        sys.exit(_verify_against(against, paths, write, check, verify, use_runtime, fmt, jobs, quiet, verify_timeout,
                                 pairs))
    if "-" in paths:
        if len(paths) > 1:
            raise click.UsageError("- (stdin) cannot be combined with other paths")
        if verify:
            raise click.UsageError("--verify needs files (their folder is where the modules they import are found)")
        sys.exit(_stdin(check, use_runtime, fmt))
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise click.UsageError(f"no such file or directory: {missing[0]}")
    want_diff = fmt == "text" and not write and not check
    progress = not quiet and fmt == "text" and sys.stderr.isatty()
    # the console script's: a run that writes nothing and runs no code is recorded
    recorder = click.get_current_context().obj
    recorder = recorder if isinstance(recorder, Recorder) and not (write or verify or no_cache) else None
    inputs: dict[str, list[int] | None] | None = {} if recorder is not None else None
    with _Progress(progress) as bar:
        reports = api.migrate_paths(paths, write=write and not check, use_runtime=use_runtime, diff=want_diff,
                                    exclude=exclude, extend_exclude=extend_exclude, jobs=jobs, cache=not no_cache,
                                    on_progress=bar.update, verify=verify, verify_timeout=verify_timeout,
                                    inputs=inputs)
    _emit(reports, write and not check, check, fmt, quiet, verify, said)
    status = report.exit_status(reports, check, write)
    if recorder is not None and inputs is not None and status in (report.EXIT_OK, report.EXIT_WOULD_CHANGE):
        recorder.keep(said, status, inputs)
    sys.exit(status)


def _say(said: list[tuple[bool, str]], text: str, to_stderr: bool) -> None:
    """Print ``text`` as it is (no newline added) and note it in ``said``."""
    (sys.stderr if to_stderr else sys.stdout).write(text)
    said.append((to_stderr, text))


def _capped(jobs: int | None, quiet: bool, said: list[tuple[bool, str]]) -> int | None:
    """-j at most this machine's cores (saying so): more processes than cores only wait, and each
    takes memory."""
    cores = os.cpu_count() or 1
    if jobs is not None and jobs > cores:
        if not quiet:
            _say(said, f"-j {jobs}: capped at {cores}, this machine's cores\n", True)
        return cores
    return jobs


def _pair(text: str) -> tuple[str, str]:
    original, sep, port = text.partition("=")
    if not sep or not original.isidentifier() or not port.isidentifier():
        raise click.UsageError(f"--verify-call takes ORIGINAL=PORT, two module-level names; got {text!r}")
    return original, port


def _verify_against(original: str, paths: tuple[str, ...], write: bool, check: bool, verify: bool, use_runtime: bool,
                    fmt: str, jobs: int | None, quiet: bool, timeout: float | None,
                    pairs: list[tuple[str, str]] | tuple = ()) -> int:
    if len(paths) != 1 or paths[0] == "-":
        raise click.UsageError("--verify-against ORIGINAL takes exactly one PATH: the migrated file or directory")
    if write or check or verify or use_runtime:
        raise click.UsageError("--verify-against checks an existing migration: it takes none of --write, --check, "
                               "--verify, --use-runtime")
    if not os.path.exists(paths[0]):
        raise click.UsageError(f"no such file or directory: {paths[0]}")
    from .api import verify_port

    try:
        reports = verify_port(original, paths[0], jobs=jobs or os.cpu_count() or 1, timeout=timeout, pairs=pairs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if fmt == "json":
        click.echo(report.to_json(reports, False, True, _isolation()))
    else:
        for rep in reports:
            for d in sorted(rep.diagnostics):
                click.echo(d.format(rep.path), err=True)
        if not quiet:
            click.echo(f"{len(reports)} file{'s' if len(reports) != 1 else ''} with overrides checked against "
                       f"{paths[0]}: {report.verification_summary(report.totals(reports, True))}", err=True)
            _isolation_note([])
    return report.exit_status(reports, False)


def _isolation() -> str | None:
    """Where verification's workers ran with less isolation than documented: one line, or None."""
    from .verifier.driver import ISOLATION

    return ISOLATION["line"]


def _isolation_note(said: list[tuple[bool, str]]) -> None:
    line = _isolation()
    if line:
        _say(said, line + "\n", True)


def _stdin(check: bool, use_runtime: bool, fmt: str) -> int:
    try:
        text = decode(sys.stdin.buffer.read()).text
    except DECODE_ERRORS as exc:
        failed = cannot_decode("-", exc)
        if fmt == "json":
            click.echo(report.to_json([failed], write=False))
        else:
            click.echo(failed.diagnostics[0].format("-"), err=True)
        return report.EXIT_FAILED
    new, rep = migrate_text("-", text, use_runtime)
    if fmt == "json":
        click.echo(report.to_json([rep], write=False))
    elif not check:
        sys.stdout.write(new)
    for d in sorted(rep.diagnostics):
        if fmt == "text":
            click.echo(d.format("-"), err=True)
    return report.exit_status([rep], check)


def _emit(reports: list[report.FileReport], write: bool, check: bool, fmt: str, quiet: bool,
          verified: bool, said: list[tuple[bool, str]]) -> None:
    if fmt == "json":
        _say(said, report.to_json(reports, write, verified, _isolation() if verified else None) + "\n", False)
        return
    for rep in reports:
        if rep.diff:
            _say(said, rep.diff, False)
        if check and rep.changed and not quiet:
            _say(said, f"would migrate {rep.path}\n", True)
        for d in sorted(rep.diagnostics):
            _say(said, d.format(rep.path) + "\n", True)
    if not quiet:
        _say(said, report.summary_line(reports, write, verified) + "\n", True)
        if verified:
            _isolation_note(said)


if __name__ == "__main__":  # pragma: no cover
    main()
