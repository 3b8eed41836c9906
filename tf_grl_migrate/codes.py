"""The one table of diagnostic codes: code -> title. Each 1xx/2xx code is owned by one idiom
(tf_grl_migrate/migrator/idioms), which holds an example of it. Messages are written where a check gives
them: in the idiom that owns them (its checks and rules; GRL102 of a map target in targets.py,
GRL102 of a link between modules in facts.py). 9xx belong to the file
layer (files.py, notebooks.py, api.py), as does GRL112. tests/test_idioms.py checks the owners and
runs the examples; tests/test_codes.py checks that every code has a row in docs/idioms.md and a test."""

# Stable codes. 1xx: an override the tool refused to migrate (site left unchanged).
# 2xx: a note on a file the tool migrated (nothing refused; --check does not fail for it).
# 3xx: verification of a migrated site (--verify, --verify-against); GRL302 is an error.
# 9xx: a file the tool could not process (file left unchanged).
CODES = {
    "GRL101": "override block calls code the tool cannot see into",
    "GRL102": "override target cannot be matched to a gradient registration",
    "GRL103": "gradient function uses op features tf.custom_gradient cannot supply",
    "GRL104": "op type not in the op table",
    "GRL105": "override map is not a literal dict",
    "GRL106": "gradient registration cannot be converted",
    "GRL107": "registration not visible where it is used",
    "GRL108": "overridden op created in a form the tool cannot rewrite",
    "GRL109": "override target is a TensorFlow gradient that reads another number of op inputs",
    "GRL110": "another use of the same registration could not be migrated",
    "GRL111": "gradient_override_map used outside a with statement",
    "GRL112": "notebook cell that is not Python (%%bash, ...) or does not parse holds an override",
    "GRL113": "gradient_override_map that is not provably tf.Graph's (a wrapper, or an unresolved receiver)",
    "GRL114": "gradient code the rewrite would move uses a TensorFlow name TF2 does not have",
    "GRL115": "function.Defun with a gradient the tool cannot turn into tf.custom_gradient inline",
    "GRL201": "note: Keras 2 code in the migrated file that Keras 3 lacks and the tool could not respell",
    "GRL202": "note: a gradient registration no block of the file or of the run uses is kept as it is",
    "GRL203": "note: an override map key that is no op type overrode nothing in TF1, nor after migration",
    "GRL204": "note: the code a migrated site runs uses a TensorFlow name TF2 has in no form",
    "GRL205": "note: a function.Defun without a gradient of its own: TF2 gives it no gradient in a tf.function; kept",
    "GRL206": "note: a migrated function.Defun's arguments TF2 has no use for (input types, func_name, ...) dropped",
    "GRL207": "note: an override block makes no op of a mapped type: TF1 applied the map to nothing; it is removed",
    "GRL301": "note: verified: the migrated site gives TF1's forward values and gradients (--verify)",
    "GRL302": "verification: the migrated site does not give TF1's forward values or gradients, or raises",
    "GRL303": "note: not verifiable: the site could not be exercised (the reason says why)",
    "GRL901": "cannot read or decode file",
    "GRL902": "cannot parse file",
    "GRL903": "internal error while transforming file",
    "GRL904": "rewrite failed the safety check",
    "GRL905": "cannot write file",
    "GRL906": "notebook cannot be written back exactly",
    "GRL907": "file over the size limit (64 MiB), skipped unread",
}
