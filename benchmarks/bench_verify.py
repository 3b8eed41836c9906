"""Verification time per site, beside a bare TensorFlow import measured in the same run.

For the given folders (default: the project's rewrite cases, one file each), migrate every file
in memory, then time ``tf_grl_migrate.verifier.verify`` over all of them (the workers start,
import TensorFlow, run every site under TF1 and TF2, eager and tf.function). A bare
``python -c "import tensorflow"`` is timed the same number of rounds. Reported: the bare import,
the whole verification, and the time per site once the import is paid:
(verification - import) / sites. Target (issue #22): about half a second per site or less on
2 cores.

    python benchmarks/bench_verify.py [FOLDER ...] [--rounds 3] [-j 2]
"""

import argparse
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tf_grl_migrate import migrate_source  # noqa: E402
from tf_grl_migrate.verifier import Job, verify  # noqa: E402


def jobs_of(folders) -> list:
    jobs = []
    for folder in folders:
        folder = pathlib.Path(folder)
        files = sorted(folder.rglob("before.py")) if (folder / "dann_builder_class").exists() else sorted(
            folder.glob("*.py"))
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            new = migrate_source(text, path=str(path)).code
            if new != text:
                jobs.append(Job(str(path), text, new))
    return jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*", default=[str(ROOT / "tests" / "cases" / "rewrite")])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    jobs = jobs_of(args.folders)
    imports, runs, sites, statuses = [], [], 0, {}
    for _ in range(args.rounds):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import tensorflow"], check=True, capture_output=True)
        imports.append(time.perf_counter() - t)
        t = time.perf_counter()
        found = verify(jobs, workers=args.jobs)
        runs.append(time.perf_counter() - t)
        results = [v for vs in found.values() for v in vs]
        sites = len(results)
        statuses = {}
        for v in results:
            statuses[v.status] = statuses.get(v.status, 0) + 1
    best_import, best_run = min(imports), min(runs)
    print(f"files migrated: {len(jobs)}, sites: {sites} ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})")
    print(f"bare `import tensorflow`: {best_import:.2f} s (min of {args.rounds})")
    print(f"verification, -j {args.jobs}: {best_run:.2f} s (min of {args.rounds})")
    print(f"per site after the import: {(best_run - best_import) / max(sites, 1):.3f} s "
          f"(target: about 0.5 s or less)")


if __name__ == "__main__":
    main()
