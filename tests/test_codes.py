"""The one table of codes (tf_grl_migrate/codes.py CODES): every code is documented (README, docs/)
and exercised by a test: a refusal case under tests/cases/refuse for each 1xx code, a test file
naming it for the notes (2xx) and file failures (9xx)."""

import pathlib
import re

import pytest

from tf_grl_migrate.codes import CODES

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = pathlib.Path(__file__).resolve().parent
README = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
ELSEWHERE = {"GRL112": "test_notebooks.py"}  # notebook cells: not a .py refusal case


def _documented(code):
    if re.search(rf"\b{code}\b", README):
        return True
    number = int(code[3:])
    return any(int(a) <= number <= int(b) for a, b in re.findall(r"GRL(\d{3})[–-]GRL(\d{3})", README))


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_is_documented_and_tested(code):
    assert _documented(code), f"{code} has no README row"
    if code.startswith("GRL1") and code not in ELSEWHERE:
        cases = [p for p in (TESTS / "cases" / "refuse").glob("*/expected.txt") if code in p.read_text()]
        assert cases, f"{code} has no refusal case under tests/cases/refuse"
    else:
        files = [ELSEWHERE[code]] if code in ELSEWHERE else [p.name for p in TESTS.glob("test_*.py")]
        assert any(code in (TESTS / f).read_text() for f in files if f != "test_codes.py"), f"no test names {code}"


def test_a_code_outside_the_table_cannot_be_emitted():
    from tf_grl_migrate.codes import CODES
    from tf_grl_migrate.report import Diagnostic

    with pytest.raises(ValueError, match=r"not in tf_grl_migrate\.codes\.CODES"):
        Diagnostic(1, 1, "GRL199", "a code nobody put in the table")
    assert all(Diagnostic(1, 1, code, "m").code == code for code in CODES)


def test_each_code_carries_its_explanation_and_the_docs_are_made_from_it():
    """codes.py is the one source of each code's text: --explain prints the explanation, and the
    tables in docs/ are generated from it (tools/generate_code_docs.py --check)."""
    import subprocess
    import sys

    from tf_grl_migrate import api
    from tf_grl_migrate.codes import TABLE

    for code, entry in TABLE.items():
        assert entry.explanation.endswith(".") and len(entry.explanation) > 60, code
        explained = " ".join(api.explain(code).split())
        assert " ".join(entry.explanation.split()) in explained, code
    generator = ROOT / "tools" / "generate_code_docs.py"
    done = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
