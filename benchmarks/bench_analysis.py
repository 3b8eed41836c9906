"""Analysis cost against libcst's own parse, in-process, min of N runs per file.

For every ``.py`` file under the given folders (default: the project's cases), time
``tf_grl_migrate.migrator.codemod.migrate_code`` (the whole text-in/text-out migration, stability check
included) and ``libcst.parse_module`` of the same text, and print the ratio per file and in total;
the files that come out worst are timed again, three times as long (the largest of hundreds of
noisy ratios is biased upwards), and the worst file is the worst of that second timing.
``--big N`` adds a generated module of about N lines with one override in the middle, and reports
its time and peak memory against the parse's: peak RSS of a fresh process doing one or the other
(what a user sees), and Python's traced peak (which misses libcst's native allocations). Targets
(issue #39, over the development corpus): total <= 1.5x, no file over 3x; the big module (issue #11)
<= 2x in time and memory.

    python benchmarks/bench_analysis.py [FOLDER ...] [--rounds 3] [--big 50000] [--phases]
"""

import argparse
import gc
import pathlib
import subprocess
import sys
import time
import tracemalloc

import libcst

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tf_grl_migrate.migrator import codemod  # noqa: E402

BIG_HEAD = "import tensorflow as tf\n\n\n@tf.RegisterGradient('Rev')\ndef _rev(op, grad):\n    return -grad\n\n\n"
BIG_UNIT = '''def layer_{i}(x, width={i}):
    """Layer {i}."""
    y = tf.matmul(x, tf.ones([width, width])) + {i}
    if width > 3:
        y = tf.nn.relu(y)
    return [y * k for k in range(3)]


'''
BIG_SITE = ("def flipped(x):\n    g = tf.get_default_graph()\n"
            "    with g.gradient_override_map({'Identity': 'Rev'}):\n        return tf.identity(x)\n\n\n")


def big_module(lines: int) -> str:
    units = max(1, lines // BIG_UNIT.count("\n"))
    half = units // 2
    body = [BIG_UNIT.format(i=i) for i in range(units)]
    return BIG_HEAD + "".join(body[:half]) + BIG_SITE + "".join(body[half:])


def best(fn, rounds):
    times = []
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def interleaved(text, rounds):
    """Min of ``rounds`` timings of the parse and of the migration, taken in turns so that both
    see the same moments of a noisy machine (a file of 1 ms is at the mercy of a few)."""
    parse, ours = [], []
    for _ in range(rounds):
        for fn, times in ((lambda: libcst.parse_module(text), parse), (lambda: codemod.migrate_code(text), ours)):
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return min(parse), min(ours)


def peak(fn):
    gc.collect()
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


_RSS = """
import sys
sys.path.insert(0, {root!r})
sys.setrecursionlimit(10000)
import libcst
from tf_grl_migrate.migrator import codemod
text = open({path!r}, encoding="utf-8").read()
libcst.parse_module(text) if {parse_only} else codemod.migrate_code(text)
print(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""


def peak_rss(text: str, parse_only: bool) -> int:
    """Peak resident memory (bytes) of a fresh process that imports both and does one job: what
    a user sees, including what libcst's native parser allocates outside Python's allocator."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        out = subprocess.run([sys.executable, "-c", _RSS.format(root=str(ROOT), path=f.name, parse_only=parse_only)],
                             capture_output=True, text=True, check=True).stdout
    finally:
        pathlib.Path(f.name).unlink()
    return int(out.split()[-1]) * 1024  # VmHWM, in KiB: the high-water mark of this process's own
    # memory (ru_maxrss would carry the forking parent's over the exec)


def phases(texts: list[str], rounds: int, parse: float) -> None:
    """Where the time of migrate_code goes over ``texts``, phase by phase: each phase's function
    is wrapped in a timer for the run (a nested phase's time is its own, not its caller's; the
    second, stability pass adds to the same phases), min of ``rounds`` runs per file. Shares of
    the whole, and multiples of ``parse`` (the time of one libcst parse of each file, as in the
    ratio above): the fixed cost per file, found."""
    import time as clock

    from tf_grl_migrate.migrator import analysis, precheck, rewrite, safety

    spent: dict[str, float] = {}
    stack: list[list] = []  # [label, started, time of phases inside it]

    def timed(label, function):
        def run(*args, **kwargs):
            stack.append([label, clock.perf_counter(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                _, started, inner = stack.pop()
                took = clock.perf_counter() - started
                spent[label] = spent.get(label, 0.0) + took - inner
                if stack:
                    stack[-1][2] += took
        return run

    patches = [  # (label, owner, attribute): what each phase is
        ("screen (ast)", precheck, "screen"),
        ("libcst parse", libcst, "parse_module"),
        ("the planner's one walk", analysis.Planner, "__init__"),
        ("the rules' decisions", analysis.Planner, "decide"),
        ("building the plan", rewrite.Builder, "build"),
        ("applying it (transformer)", libcst.Module, "visit"),
        ("the safety net (ast)", safety, "check"),
    ]
    saved = [(owner, name, getattr(owner, name)) for _, owner, name in patches]
    code_property = libcst.Module.code
    try:
        for label, owner, name in patches:
            setattr(owner, name, timed(label, getattr(owner, name)))
        libcst.Module.code = property(timed("writing the code", code_property.fget))
        whole = 0.0
        by_phase: dict[str, float] = {}
        for text in texts:
            best_run = None
            for _ in range(rounds):
                spent.clear()
                t0 = clock.perf_counter()
                codemod.migrate_code(text)
                took = clock.perf_counter() - t0
                if best_run is None or took < best_run[0]:
                    best_run = (took, dict(spent))
            whole += best_run[0]
            for label, seconds in best_run[1].items():
                by_phase[label] = by_phase.get(label, 0.0) + seconds
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
        libcst.Module.code = code_property
    print(f"phases over {len(texts)} files (timers on each phase's function; both passes; x: one parse of the file):")
    for label in [p[0] for p in patches] + ["writing the code"]:
        seconds = by_phase.get(label, 0.0)
        print(f"  {label:28} {100 * seconds / whole:5.1f} %  {seconds / parse:5.2f}x the parse")
    rest = whole - sum(by_phase.values())
    print(f"  {'everything else':28} {100 * rest / whole:5.1f} %  {rest / parse:5.2f}x the parse")
    print(f"  {'the whole migration':28} 100.0 %  {whole / parse:5.2f}x the parse")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="*", default=[str(ROOT / "tests" / "cases")])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--big", type=int, default=0, help="lines of a generated module to add")
    parser.add_argument("--show", type=int, default=8, help="worst files to list")
    parser.add_argument("--phases", action="store_true", help="where the time goes, phase by phase (cProfile)")
    args = parser.parse_args()

    rows = []
    for folder in args.folders:
        for path in sorted(pathlib.Path(folder).expanduser().rglob("*.py")):
            text = path.read_bytes().decode("utf-8", "replace")
            try:
                libcst.parse_module(text)
            except libcst.ParserSyntaxError:
                continue
            try:
                parse, ours = interleaved(text, args.rounds)
            except codemod.SafetyError:
                continue
            rows.append((ours / parse, ours, parse, path, text))
    total_ours = sum(r[1] for r in rows)
    total_parse = sum(r[2] for r in rows)
    rows.sort(key=lambda r: r[0], reverse=True)
    if rows:
        # The largest of a few hundred noisy ratios is biased upwards (one burst on a busy machine
        # in a 5 ms file): the files that came out worst are timed again, three times as long,
        # and both figures shown; the worst file is the worst of the second timing.
        again = {}
        for row in rows[: args.show]:
            parse, ours = interleaved(row[4], 3 * args.rounds)
            again[id(row)] = ours / parse
        print(f"{'ratio':>6} {'again':>6} {'ours ms':>9} {'parse ms':>9}  file")
        for row in rows[: args.show]:
            ratio, ours, parse, path, _ = row
            print(f"{ratio:6.2f} {again[id(row)]:6.2f} {ours * 1e3:9.1f} {parse * 1e3:9.1f}  "
                  f"{path.parent.name}/{path.name}")
        worst = max(again.values())
        print(f"files: {len(rows)}; total ours/parse: {total_ours / total_parse:.2f}x "
              f"({total_ours:.2f} s / {total_parse:.2f} s); worst file: {worst:.2f}x timed again "
              f"({rows[0][0]:.2f}x at first) (targets: 1.5x, 3x)")
    if args.phases and rows:
        phases([row[4] for row in rows], args.rounds, total_parse)
    if args.big:
        text = big_module(args.big)
        parse = best(lambda: libcst.parse_module(text), 1)
        ours = best(lambda: codemod.migrate_code(text), 1)
        mem_parse = peak(lambda: libcst.parse_module(text))
        mem_ours = peak(lambda: codemod.migrate_code(text))
        rss_parse, rss_ours = peak_rss(text, True), peak_rss(text, False)
        print(f"big module ({text.count(chr(10))} lines): time {ours:.2f} s vs parse {parse:.2f} s = "
              f"{ours / parse:.2f}x; peak RSS {rss_ours / 2**20:.0f} MiB vs {rss_parse / 2**20:.0f} MiB = "
              f"{rss_ours / rss_parse:.2f}x (targets: 2x, 2x); Python-traced peak {mem_ours / 2**20:.0f} MiB vs "
              f"{mem_parse / 2**20:.0f} MiB = {mem_ours / mem_parse:.2f}x (libcst's native parser is not traced)")


if __name__ == "__main__":
    main()
