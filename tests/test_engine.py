"""The engine's shortcuts around libcst must give what libcst's public road gives."""

import pathlib

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ScopeProvider

from tf_grl_migrate.analysis import _scopes

CASES = pathlib.Path(__file__).parent / "cases"
SOURCES = sorted([*(CASES / "rewrite").glob("*/before.py"), *(CASES / "refuse").glob("*/before.py")])[::4]


def _summary(mapping):
    out = {}
    for node, scope in mapping.items():
        if scope is None:
            out[node] = None
            continue
        names = sorted({a.name for a in scope.assignments})
        reads = sorted((a.node.value if isinstance(a.node, cst.Name) else type(a.node).__name__,
                        len(a.referents)) for a in scope.accesses)
        out[node] = (type(scope).__name__, tuple(names), tuple(reads))
    return out


@pytest.mark.parametrize("path", SOURCES, ids=[p.parent.name for p in SOURCES])
def test_scopes_are_libcsts_own(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    fast = _scopes(MetadataWrapper(module, unsafe_skip_copy=True))
    public = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    assert _summary(fast) == _summary(public)
