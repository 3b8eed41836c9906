"""Compare the migrator's own scope analysis (migrator/bindings.py and scopes.py, gathered in the
planner's walk) with libcst's public ScopeProvider on the same trees: the scope of every statement
and expression, the qualified names of every name, attribute and call, what every read may see,
and every binding with how many reads see it.

    python tools/check_scopes.py                 # the cases, the fixtures and the standard library
    python tools/check_scopes.py PATH...         # these files and folders (*.py under them)
    python tools/check_scopes.py --site-packages 250   # and 250 modules of site-packages, drawn at random

Prints one line per module that differs (with the first difference) and a summary; exits 1 when
any differs. tests/test_engine.py runs ``differences`` on a share of the cases and on corners."""

from __future__ import annotations

import argparse
import pathlib
import random
import sys
import sysconfig

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tf_grl_migrate.migrator.analysis import Collector  # noqa: E402 - after the path is set


def _scope_key(scope):
    return None if scope is None else (type(scope).__name__, id(getattr(scope, "node", None)))


def _refs(refs):
    return sorted((r.name, type(r).__name__, id(getattr(r, "node", None))) for r in refs)


def differences(source: str, limit: int = 1) -> list[str]:
    """Where the two analyses of ``source`` answer differently (at most ``limit``)."""
    module = cst.parse_module(source)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    collector = Collector()
    collector.walk(module)
    ours = collector.bindings.finish()
    found: list[str] = []
    scopes: dict = {}

    def differ(what: str, node) -> bool:
        found.append(f"{what}: `{module.code_for_node(node).strip()[:60]}`")
        return len(found) >= limit

    for node in collector.nodes:
        if not isinstance(node, (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement)):
            continue
        their, our = theirs.get(node), ours.get(node)
        if _scope_key(our) != _scope_key(their):
            if differ(f"the scope of a {type(node).__name__}", node):
                return found
            continue
        if their is None:
            continue
        scopes[id(their)] = (their, our)
        if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and our.qualified_names(node) != {
                q.name for q in their.get_qualified_names_for(node)} and differ("qualified names", node):
            return found
        if isinstance(node, cst.Name):
            access = our.access_of(node)
            read = next((a.referents for a in their.accesses[node] if a.node is node), None)
            if ((access is None) != (read is None) or (access is not None and _refs(access.referents) != _refs(read))) \
                    and differ("what a read sees", node):
                return found
    for their, our in scopes.values():
        want = sorted((a.name, id(getattr(a, "node", None)), len(a.references)) for a in their.assignments)
        have = sorted((a.name, id(getattr(a, "node", None)), len(a.references)) for a in our.assignments)
        if want != have:
            found.append(f"the bindings of a {type(their).__name__}")
            if len(found) >= limit:
                return found
    return found


def _modules(paths) -> list[pathlib.Path]:
    out: list[pathlib.Path] = []
    for path in map(pathlib.Path, paths):
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--site-packages", type=int, default=0, metavar="N",
                    help="also N modules of site-packages, drawn at random (seed 0)")
    args = ap.parse_args(argv)
    paths = _modules(args.paths) if args.paths else _modules(
        [ROOT / "tests" / "cases", ROOT / "fixtures", sysconfig.get_paths()["stdlib"]])
    if args.site_packages:
        pool = [p for p in pathlib.Path(sysconfig.get_paths()["purelib"]).rglob("*.py")]
        paths += random.Random(0).sample(pool, min(args.site_packages, len(pool)))
    compared, unparsed, differing = 0, 0, 0
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
            found = differences(source)
        except (UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, OSError):
            unparsed += 1
            continue
        compared += 1
        if found:
            differing += 1
            print(f"{path}: {found[0]}")
    print(f"{compared} modules compared ({unparsed} not read or not parsed by libcst): {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
