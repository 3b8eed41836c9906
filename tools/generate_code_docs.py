"""Write the documentation of the codes from the one table of codes (tf_grl_migrate/codes.py):
the table in docs/idioms.md (each code, its kind, and its explanation: when the tool says it and
what to do, what ``--explain`` prints) and the list in docs/usage.md (a line each: the title).
The text between the markers is this script's; edit codes.py, then run it.

    python tools/generate_code_docs.py            # rewrite the two sections
    python tools/generate_code_docs.py --check    # exit 1 if a section is not what this produces
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tf_grl_migrate.codes import TABLE  # noqa: E402

BEGIN = "<!-- generated from tf_grl_migrate/codes.py by tools/generate_code_docs.py: edit codes.py -->"
END = "<!-- end of the generated codes -->"


def idioms_table() -> str:
    rows = ["| code | kind | when the tool says it, and what to do |", "|---|---|---|"]
    rows += [f"| {code} | {entry.kind.name} ({entry.severity}) | {entry.explanation} |"
             for code, entry in TABLE.items()]
    return "\n".join(rows)


def usage_list() -> str:
    return "\n".join(f"- `{code}` {entry.title}" for code, entry in TABLE.items())


SECTIONS = {"docs/idioms.md": idioms_table, "docs/usage.md": usage_list}


def rewritten(text: str, body: str, name: str) -> str:
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise SystemExit(f"{name}: needs one {BEGIN!r} and one {END!r} line")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a section differs from what this writes")
    args = parser.parse_args()
    stale = []
    for name, make in SECTIONS.items():
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        new = rewritten(text, make(), name)
        if new != text:
            stale.append(name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"out of date with tf_grl_migrate/codes.py: {', '.join(stale)} (run tools/generate_code_docs.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
