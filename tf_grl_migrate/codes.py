"""The one table of diagnostic codes: code -> its title, its kind (refusal, note, verification,
failure) and its severity; nothing reads a code's digits for its meaning. Each 1xx/2xx code is owned by one idiom
(tf_grl_migrate/migrator/idioms), which holds an example of it. Messages are written where a check gives
them: in the idiom that owns them (its checks and rules; GRL102 of a map target in targets.py,
GRL102 of a link between modules in facts.py). 9xx belong to the file
layer (files.py, notebooks.py, api.py), as does GRL112. tests/test_idioms.py checks the owners and
runs the examples; tests/test_codes.py checks that every code has a row in docs/idioms.md and a test."""

from typing import NamedTuple


class Kind(NamedTuple):
    name: str
    meaning: str  # what --explain says of every code of the kind


REFUSAL = Kind("refusal", "a refusal: the site is left unchanged (--check exits 1, --write exits 1)")
NOTE = Kind("note", "a note on a migrated file (nothing refused)")
VERIFICATION = Kind("verification", "verification (--verify)")
FAILURE = Kind("failure", "a file the tool could not process (exit 123; the rest of the tree is processed)")
ERROR, NOTE_SEVERITY = "error", "note"  # severities


class Code(NamedTuple):
    title: str
    kind: Kind
    severity: str  # "error" (--check fails, the JSON says so) or "note"


# Stable codes. 1xx: an override the tool refused to migrate (site left unchanged).
# 2xx: a note on a file the tool migrated (nothing refused; --check does not fail for it).
# 3xx: verification of a migrated site (--verify, --verify-against); GRL302 is an error.
# 9xx: a file the tool could not process (file left unchanged).
TABLE: dict[str, Code] = {
    "GRL101": Code("override block calls code the tool cannot see into", REFUSAL, ERROR),
    "GRL102": Code("override target cannot be matched to a gradient registration", REFUSAL, ERROR),
    "GRL103": Code("gradient function uses op features tf.custom_gradient cannot supply", REFUSAL, ERROR),
    "GRL104": Code("op type not in the op table", REFUSAL, ERROR),
    "GRL105": Code("override map is not a literal dict", REFUSAL, ERROR),
    "GRL106": Code("gradient registration cannot be converted", REFUSAL, ERROR),
    "GRL107": Code("registration not visible where it is used", REFUSAL, ERROR),
    "GRL108": Code("overridden op created in a form the tool cannot rewrite", REFUSAL, ERROR),
    "GRL109": Code("override target is a TensorFlow gradient that reads another number of op inputs", REFUSAL, ERROR),
    "GRL110": Code("another use of the same registration could not be migrated", REFUSAL, ERROR),
    "GRL111": Code("gradient_override_map used outside a with statement", REFUSAL, ERROR),
    "GRL112": Code("notebook cell that is not Python (%%bash, ...) or does not parse holds an override",
                   REFUSAL, ERROR),
    "GRL113": Code("gradient_override_map that is not provably tf.Graph's (a wrapper, or an unresolved receiver)",
                   REFUSAL, ERROR),
    "GRL114": Code("gradient code the rewrite would move uses a TensorFlow name TF2 does not have", REFUSAL, ERROR),
    "GRL115": Code("function.Defun with a gradient the tool cannot turn into tf.custom_gradient inline",
                   REFUSAL, ERROR),
    "GRL201": Code("note: Keras 2 code in the migrated file that Keras 3 lacks and the tool could not respell",
                   NOTE, NOTE_SEVERITY),
    "GRL202": Code("note: a gradient registration no block of the file or of the run uses is kept as it is",
                   NOTE, NOTE_SEVERITY),
    "GRL203": Code("note: an override map key that is no op type overrode nothing in TF1, nor after migration",
                   NOTE, NOTE_SEVERITY),
    "GRL204": Code("note: the code a migrated site runs uses a TensorFlow name TF2 has in no form",
                   NOTE, NOTE_SEVERITY),
    "GRL205": Code("note: a function.Defun without a gradient of its own: TF2 gives it no gradient in a "
                   "tf.function; kept",
                   NOTE, NOTE_SEVERITY),
    "GRL206": Code("note: a migrated function.Defun's arguments TF2 has no use for (input types, "
                   "func_name, ...) dropped",
                   NOTE, NOTE_SEVERITY),
    "GRL207": Code("note: an override block makes no op of a mapped type: TF1 applied the map to "
                   "nothing; it is removed",
                   NOTE, NOTE_SEVERITY),
    "GRL301": Code("note: verified: the migrated site gives TF1's forward values and gradients (--verify)",
                   VERIFICATION, NOTE_SEVERITY),
    "GRL302": Code("verification: the migrated site does not give TF1's forward values or gradients, or raises",
                   VERIFICATION, ERROR),
    "GRL303": Code("note: not verifiable: the site could not be exercised (the reason says why)",
                   VERIFICATION, NOTE_SEVERITY),
    "GRL901": Code("cannot read or decode file", FAILURE, ERROR),
    "GRL902": Code("cannot parse file", FAILURE, ERROR),
    "GRL903": Code("internal error while transforming file", FAILURE, ERROR),
    "GRL904": Code("rewrite failed the safety check", FAILURE, ERROR),
    "GRL905": Code("cannot write file", FAILURE, ERROR),
    "GRL906": Code("notebook cannot be written back exactly", FAILURE, ERROR),
    "GRL907": Code("file over the size limit (64 MiB), skipped unread", FAILURE, ERROR),
}
CODES = {code: entry.title for code, entry in TABLE.items()}  # code -> title (what docs and --explain show)
