"""Whole-repository speed: tf-grl-migrate --check vs a read+regex floor vs tf_upgrade_v2, one run.

The corpus is the installed tensorflow and keras packages' Python sources (several thousand
files) plus the legacy cases of tests/cases/rewrite injected into it. Each command runs as a
subprocess (interpreter start-up included for all); ours and the floor are interleaved over
several rounds and the medians compared. Ours runs twice per round: cold (``--no-cache``: every
candidate file analysed) and warm (the same command again on the unchanged tree, as in CI or a
pre-commit hook run again: answered from the run's record, rerun.py). Then, in rounds of their
own, ours after one file was edited (the record does not answer; the result cache and the quiet
index do all but that file) against the floor again. tf_upgrade_v2 runs once, with a time limit.

    python benchmarks/bench_repo.py [--rounds 5] [--upgrader-timeout 900]
"""

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tf_grl_migrate.migrator.signatures import RACY_NS  # noqa: E402

FLOOR = """
import os, re, sys
pattern = re.compile(rb"gradient_override_map")
hits = 0
for top in sys.argv[1:]:
    for root, dirs, files in os.walk(top):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(root, name), "rb") as handle:
                    hits += bool(pattern.search(handle.read()))
print(hits)
"""


def build_corpus(dest: pathlib.Path, with_stdlib: bool = False) -> int:
    import importlib.util
    import sysconfig

    skip = shutil.ignore_patterns("*.so*", "*.pyc", "__pycache__", "*.h", "*.a", "include", "site-packages")
    for package in ("tensorflow", "keras"):
        src = pathlib.Path(importlib.util.find_spec(package).origin).parent
        shutil.copytree(src, dest / package, ignore=skip)
    if with_stdlib:
        shutil.copytree(sysconfig.get_paths()["stdlib"], dest / "stdlib", ignore=skip)
    for i, case in enumerate(sorted((ROOT / "tests" / "cases" / "rewrite").iterdir())):
        target = dest / "legacy" / f"pkg{i % 5}"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(case / "before.py", target / f"{case.name}.py")
    return sum(1 for _ in dest.rglob("*.py"))


def timed(cmd, timeout=None, env=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return time.perf_counter() - start, proc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--upgrader-timeout", type=int, default=900)
    parser.add_argument("--with-stdlib", action="store_true", help="add the standard library to the corpus")
    args = parser.parse_args()
    bindir = pathlib.Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp) / "corpus"
        files = build_corpus(tree, args.with_stdlib)
        # a user's tree was not all written in the last seconds: files changed within RACY_NS of a
        # run are read again by the next (migrator/signatures.py), and so would all be here
        time.sleep(RACY_NS / 1e9 + 0.5)
        ours_cmd = [str(bindir / "tf-grl-migrate"), "--check", "-q", str(tree)]
        cold_cmd = [*ours_cmd, "--no-cache"]  # every candidate file analysed by libcst
        floor_cmd = [sys.executable, "-c", FLOOR, str(tree)]
        # the same tree without the injected legacy files: what the tool costs where nothing is to do
        clean_cmd = [*cold_cmd, "--extend-exclude", "/legacy/"]
        clean_floor_cmd = [sys.executable, "-c", FLOOR, *sorted(str(p) for p in tree.iterdir() if p.name != "legacy")]
        env = dict(os.environ, TF_GRL_MIGRATE_CACHE_DIR=str(pathlib.Path(tmp) / "cache"))
        # as installed for a user: the package's modules load from bytecode (the priming run writes it)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        assert timed(ours_cmd, env=env)[1].returncode == 1  # primes the result cache for the warm runs
        runs = {"cold": [], "warm": [], "floor": [], "clean": [], "floor_clean": []}
        for _ in range(args.rounds):
            for name, cmd in (("cold", cold_cmd), ("warm", ours_cmd), ("floor", floor_cmd), ("clean", clean_cmd),
                              ("floor_clean", clean_floor_cmd)):
                t, proc = timed(cmd, env=env)
                if name in ("cold", "warm"):
                    assert proc.returncode == 1, proc.stderr[-2000:]  # the injected legacy files would change
                runs[name].append(t)
        edited = tree / "tensorflow" / "__init__.py"
        runs |= {"edited": [], "floor_edited": []}
        for i in range(args.rounds):
            with open(edited, "a", encoding="utf-8") as handle:
                handle.write(f"# edit {i}\n")
            for name, cmd in (("edited", ours_cmd), ("floor_edited", floor_cmd)):
                t, proc = timed(cmd, env=env)
                if name == "edited":
                    assert proc.returncode == 1, proc.stderr[-2000:]
                runs[name].append(t)
        med = {k: statistics.median(v) for k, v in runs.items()}
        ours_m = med["cold"]
        legacy = sum(1 for _ in (tree / "legacy").rglob("*.py"))
        what = "tensorflow + keras" + (" + stdlib" if args.with_stdlib else "")
        print(f"corpus: {files} .py files ({what} sources + {legacy} injected legacy files); "
              f"medians of {args.rounds} rounds, start-up included")
        print(f"floor (read every file + 1 regex)        {med['floor']:6.3f} s")
        print(f"tf-grl-migrate --check, again unchanged  {med['warm']:6.3f} s  ratio {med['warm'] / med['floor']:5.2f}"
              "  (target <= 0.6, issue #39)")
        print(f"  again after one file was edited        {med['edited']:6.3f} s  "
              f"vs floor {med['floor_edited']:6.3f} s, ratio {med['edited'] / med['floor_edited']:5.2f}")
        print(f"tf-grl-migrate --check --no-cache (cold) {med['cold']:6.3f} s  ratio {med['cold'] / med['floor']:5.2f}"
              "  (no target of its own: each file with an override is analysed, bench_analysis.py)")
        print(f"without the legacy files, --no-cache     {med['clean']:6.3f} s  vs floor {med['floor_clean']:6.3f} s, "
              f"ratio {med['clean'] / med['floor_clean']:5.2f}")
        upgrader = bindir / "tf_upgrade_v2"
        out = pathlib.Path(tmp) / "upgraded"
        cmd = [str(upgrader), "--intree", str(tree), "--outtree", str(out), "--reportfile",
               str(pathlib.Path(tmp) / "report.txt")]
        try:
            t, proc = timed(cmd, timeout=args.upgrader_timeout)
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
            status = "completed" if proc.returncode == 0 else f"aborted (exit {proc.returncode}): {tail[0][:160]}"
            print(f"tf_upgrade_v2 --intree   {t:7.2f} s, {status}")
            print(f"ratio tf_upgrade_v2 / ours (cold) {t / ours_m:7.1f}x  (target >= 20)")
        except subprocess.TimeoutExpired:
            print(f"tf_upgrade_v2 --intree   did not finish in {args.upgrader_timeout} s "
                  f"(ratio >= {args.upgrader_timeout / ours_m:.0f}x)")


if __name__ == "__main__":
    main()
