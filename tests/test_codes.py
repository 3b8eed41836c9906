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
        assert all(" ".join(m.sentence.split()) in explained for m in entry.messages.values()), code
    generator = ROOT / "tools" / "generate_code_docs.py"
    done = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _sayings():
    """Each call in the package that says a message from the table: (where, code or None, key or
    None, the keywords it passes, whether it passes ``**`` too). ``Refusal.of(code, key, ...)``
    and ``Diagnostic.said(position, code, key, ...)``; a code or key held in a variable is None,
    and ``"a" if ... else "b"`` is two sayings."""
    import ast

    found = []
    for path in sorted((ROOT / "tf_grl_migrate").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("of", "said")):
                continue
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
            if (name, node.func.attr) not in (("Refusal", "of"), ("Diagnostic", "said")):
                continue
            code, key = node.args[0:2] if node.func.attr == "of" else node.args[1:3]
            keys = [key.body, key.orelse] if isinstance(key, ast.IfExp) else [key]  # "a" if ... else "b"
            passed = {k.arg for k in node.keywords if k.arg not in (None, "hints", "says_runtime", "cell")}
            for key in keys:
                literal = [a.value if isinstance(a, ast.Constant) else None for a in (code, key)]
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", *literal, passed,
                              any(k.arg is None for k in node.keywords)))
    return found


def test_each_message_is_said_from_the_table_with_the_fields_it_reads():
    """What a diagnostic says is one of its code's messages in the table (codes.TABLE): every call
    that says one names a message of that code and passes exactly the fields its templates read
    (a misspelt field would raise only when the check fires; an extra one would be dropped
    unseen); every message is said somewhere; each is one line."""
    from tf_grl_migrate.codes import TABLE

    sayings = _sayings()
    assert len(sayings) > 100
    for where, code, key, passed, splat in sayings:
        if key is None:
            continue
        codes = [code] if code is not None else [c for c, entry in TABLE.items() if key in entry.messages]
        assert codes and all(key in TABLE[c].messages for c in codes), f"{where}: no message {code} {key!r}"
        for c in codes:
            wanted = TABLE[c].messages[key].fields()
            assert passed <= wanted if splat else passed == wanted, f"{where}: {c} {key!r} reads {sorted(wanted)}"
    package = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tf_grl_migrate").rglob("*.py")
                        if p.name != "codes.py")
    for code, entry in TABLE.items():
        for key, message in entry.messages.items():
            assert f'"{key}"' in package, f"{code} {key!r} is said nowhere"
            assert "\n" not in message.sentence + message.details, f"{code} {key!r}"


def test_no_diagnostic_is_written_outside_the_table():
    """No Refusal or Diagnostic is built from a literal code and a text of its own: the words are
    the table's (Refusal.of, Diagnostic.said)."""
    import ast

    for path in sorted((ROOT / "tf_grl_migrate").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name in ("Refusal", "Diagnostic", "at"):
                    literal = [a for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("GRL")]
                    assert not literal, f"{path.relative_to(ROOT)}:{node.lineno} writes its own {literal[0].value}"
