"""The migration as a LibCST codemod command, for teams that already run
``python -m libcst.tool codemod ...`` over their repositories.
Why it is built so: docs/design.md, "libcst_command.py"."""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import multiprocessing.util
import os
import pickle
import tempfile
import time

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from .api import migrate_source

_RUNS: dict = {}  # (root, use_runtime) -> {real path: (new text or None, diagnostics)}


class MigrateGradientOverrides(CodemodCommand):
    DESCRIPTION = ("Migrate TF1 gradient_override_map code (gradient reversal, straight-through estimators, "
                   "gradient clipping, model-wide maps with --use-runtime) to TF2; refusals become warnings.")

    def __init__(self, context: CodemodContext, use_runtime: bool = False) -> None:
        super().__init__(context)
        self.use_runtime = use_runtime

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--use-runtime", action="store_true", dest="use_runtime",
                                help="the --use-runtime strategy: tf_grl_migrate's runtime where it applies")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        source = tree.code
        found = self._from_run(source)
        if found is None:
            result = migrate_source(source, use_runtime=self.use_runtime, path=self.context.filename or "<module>")
            new, diagnostics = (result.code if result.changed else None), result.diagnostics
        else:
            new, diagnostics = found
        for d in diagnostics:
            if d.is_failure:
                raise SkipFile(f"{d.code} {d.line}:{d.col}: {d.sentence}")
            self.warn(f"{d.code} {d.line}:{d.col}: {d.sentence}")
        return tree if new is None else cst.parse_module(new)

    def _from_run(self, source: str) -> tuple | None:
        """This file's result in the run over its repository, or None (no root known, or the text
        is not the file's as read from disk)."""
        filename, module = self.context.filename, self.context.full_module_name
        if not filename or not module:
            return None
        path = os.path.realpath(filename)
        depth = len(module.split(".")) + (os.path.basename(path) == "__init__.py")
        root = path
        for _ in range(depth):
            root = os.path.dirname(root)
        found = _run(root, self.use_runtime).get(path)
        if found is None or found[2] != source:
            return None
        return found[:2]


def _run(root: str, use_runtime: bool) -> dict:
    key = (root, use_runtime)
    if key not in _RUNS:
        _RUNS[key] = _snapshot(root, use_runtime)
    return _RUNS[key]


def _snapshot(root: str, use_runtime: bool) -> dict:
    """The run over ``root``, computed once per libcst run: by the worker that takes the lock
    first, read by the others (they wait, so no file is written before it exists)."""
    runner = os.getpid() if multiprocessing.current_process().name == "MainProcess" else os.getppid()
    tag = hashlib.sha256(f"{root}\0{use_runtime}\0{runner}".encode()).hexdigest()[:20]
    target = os.path.join(tempfile.gettempdir(), f"tf-grl-migrate-codemod-{tag}.pickle")
    lock = target + ".lock"
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        deadline = time.monotonic() + 3600
        while not os.path.exists(target):
            if time.monotonic() > deadline:
                raise SkipFile("the repository snapshot of another worker did not appear within an hour") from None
            time.sleep(0.05)
        with open(target, "rb") as handle:
            return pickle.load(handle)
    # gone when this process ends, after the run: workers read it at their first file
    multiprocessing.util.Finalize(None, _remove, args=(target, lock), exitpriority=0)
    results = _migrate_tree(root, use_runtime)
    scratch = target + f".{os.getpid()}.tmp"
    with open(scratch, "wb") as handle:
        pickle.dump(results, handle)
    os.replace(scratch, target)  # whole or not at all: the waiting workers read it once it is there
    return results


def _remove(*paths: str) -> None:
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass


def _migrate_tree(root: str, use_runtime: bool) -> dict:
    from .api import run_all
    from .migrator.files import decode, discover, read

    files = discover([root])
    reports = run_all(files, False, False, use_runtime, 1, lambda: None, None, [root], keep_text=True)
    results = {}
    for path, report in zip(files, reports):
        if not path.endswith(".py"):
            continue
        raw, failure = read(path)
        if failure is not None:
            continue
        try:
            text = decode(raw).text
        except (UnicodeDecodeError, LookupError):
            continue
        new = report.new_text if report.changed else None
        if report.changed and new is None:
            continue  # not kept: the file is migrated alone
        results[os.path.realpath(path)] = (new, sorted(report.diagnostics), text)
    return results
