"""The one table of diagnostic codes: code -> its title, its kind (refusal, note, verification,
failure), its severity and its explanation (when the tool says it and what to do: what
``--explain`` prints, and what docs/idioms.md and docs/usage.md are generated from, by
tools/generate_code_docs.py); nothing reads a code's digits for its meaning. Each 1xx/2xx code is
owned by one idiom (tf_grl_migrate/migrator/idioms), which holds an example of it. A diagnostic's
one-line message is written where a check gives it: in the idiom that owns it (its checks and
rules; GRL102 of a map target in targets.py, GRL102 of a link between modules in facts.py); its
hints are fields of their own (report.Diagnostic.hints). 9xx belong to the file layer (files.py,
notebooks.py, api.py), as does GRL112. tests/test_idioms.py checks the owners and runs the
examples; tests/test_codes.py checks that every code is documented from here and tested."""

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
    explanation: str = ""  # when the tool says it and what to do (--explain; docs/idioms.md is made from it)


# Stable codes. 1xx: an override the tool refused to migrate (site left unchanged).
# 2xx: a note on a file the tool migrated (nothing refused; --check does not fail for it).
# 3xx: verification of a migrated site (--verify, --verify-against); GRL302 is an error.
# 9xx: a file the tool could not process (file left unchanged).
TABLE: dict[str, Code] = {
    "GRL101": Code(
        "override block calls code the tool cannot see into", REFUSAL, ERROR,
        'The block calls something the tool cannot see into (`h = encoder(x)`, a model-wide `{"Relu": '
        '"GuidedRelu"}` around `build_model(...)`), or hands control away without a call: `yield` / `yield '
        "from` (a `@contextmanager` such as `with guided_relu(): build_model()`), `await`, `import m` / "
        "`from m import *`, `with some_object:`, `async for/with`. The override applies to every op of that"
        " type created there, so the tool cannot say which ops to wrap. Wrap the ops the called code makes "
        "with `@tf.custom_gradient`, or (a model-wide map) run with `--use-runtime`, which enters the same "
        "map through `tf_grl_migrate.gradient_override_map`."),
    "GRL102": Code(
        "override target cannot be matched to a gradient registration", REFUSAL, ERROR,
        "The override target cannot be matched to a registration in the module (or, in a run over a tree, "
        "in a module it imports): no registration has that name, or the target is a name whose values the "
        "tool cannot list (a parameter of a public function, or one a call passes a variable for, a "
        "computed string, a value that may be None with no `if name:` guard). Run the tool on the module "
        "that registers the gradient together with this one, or write the gradient with "
        "`@tf.custom_gradient`."),
    "GRL103": Code(
        "gradient function uses op features tf.custom_gradient cannot supply", REFUSAL, ERROR,
        "The gradient function uses what `tf.custom_gradient` cannot supply (`op.get_attr`, `op.node_def`, "
        "...): a TF2 gradient sees the op's inputs and outputs, not the op. Rewrite the gradient to read "
        "only `op.inputs` and `op.outputs`, or write it with `@tf.custom_gradient` by hand."),
    "GRL104": Code(
        "op type not in the op table", REFUSAL, ERROR,
        'The op type is not one the generated op table can wrap (docs/idioms.md, "The op table"), so the '
        "tool does not know which calls create it. Wrap that op with `@tf.custom_gradient` by hand; "
        "`--use-runtime` takes a map the runtime can apply to any op type."),
    "GRL105": Code(
        "override map is not a literal dict", REFUSAL, ERROR,
        "The override map is not a dict literal, or is a variable that something can change between binding"
        ' and use (`m["Sign"] = "Identity"`, `m.update(...)`, `setdefault`, a loop filling it, passed to a '
        "function): every use of the variable must be a `gradient_override_map(...)` argument. Write the "
        "map as a literal at the `with`."),
    "GRL106": Code(
        "gradient registration cannot be converted", REFUSAL, ERROR,
        "A gradient registration the tool cannot turn into a `@tf.custom_gradient` function: a registration"
        " made by a factory or under a name bound twice, one used for op types with different numbers of "
        "inputs, a function that does not take `(op, grad)`, or one other modules use that cannot keep its "
        "own name. Write that gradient with `@tf.custom_gradient` by hand."),
    "GRL107": Code(
        "registration not visible where it is used", REFUSAL, ERROR,
        "The registration is not visible where the map uses it: it is defined after the block, or where the"
        " block cannot see it (a nested scope, a decorated or rebound class, a class the use is outside "
        "of). Move the registration to module level above the block, then migrate again."),
    "GRL108": Code(
        "overridden op created in a form the tool cannot rewrite", REFUSAL, ERROR,
        "The overridden op is created in a form the tool cannot rewrite: a keyword it cannot pass on "
        "(`tf.identity(x, name=f(y))`), or an operator (`*`, `-`) whose operands are not provably "
        "TensorFlow tensors. Spell the op as a call with positional arguments, or write it with "
        "`@tf.custom_gradient`."),
    "GRL109": Code(
        "override target is a TensorFlow gradient that reads another number of op inputs", REFUSAL, ERROR,
        "The map borrows a TensorFlow gradient that reads another number of op inputs than the overridden "
        'op has (`{"Sign": "Add"}`: Add\'s gradient reads two inputs, Sign has one). TF1 would have failed '
        "or read the wrong input; write the gradient you meant with `@tf.custom_gradient`."),
    "GRL110": Code(
        "another use of the same registration could not be migrated", REFUSAL, ERROR,
        "Another use of the same registration could not be migrated, so this one is kept too: a "
        "registration is converted for all its uses or for none, in this module or, in a run over a tree, "
        "in the modules linked to it. Fix the refusal the message names, then migrate again."),
    "GRL111": Code(
        "gradient_override_map used outside a with statement", REFUSAL, ERROR,
        "`gradient_override_map` is entered outside a `with` statement (`ctx = g.gradient_override_map(...)`;"
        " any receiver, wrappers included), taken as a value (`enter = g.gradient_override_map`, "
        "`getattr(g, \"gradient_override_map\")`), or the graph's private `_gradient_override_map` dict is used "
        "directly. TF2 ignores the map however it is entered. Rewrite the affected ops with "
        "`@tf.custom_gradient`; where the hint says so, `--use-runtime` moves the map onto "
        "`tf_grl_migrate.gradient_override_map`."),
    "GRL112": Code(
        "notebook cell that is not Python (%%bash, ...) or does not parse holds an override", REFUSAL, ERROR,
        "An override in a notebook cell that is not Python (`%%bash`, `%%writefile`, ...) or that does not "
        "parse. The tool leaves the cell as it is; make it a Python cell, or migrate that code by hand."),
    "GRL113": Code(
        "gradient_override_map that is not provably tf.Graph's (a wrapper, or an unresolved "
        "receiver)", REFUSAL, ERROR,
        "A `gradient_override_map` that is not provably `tf.Graph`'s: a wrapper named like the API (`from "
        "lucid.misc.gradient_override import gradient_override_map`, also under another name), or a "
        "receiver the tool cannot resolve to a graph (a parameter, `helper.ctx`). Graphs it can prove: "
        "`x.graph`, `sess.graph`, `K.get_session().graph`, `tf.get_default_graph()`, `tf.Graph()`, names "
        "bound to those (in every branch that reaches the use, or `with tf.Graph().as_default() as g`), "
        "attributes such as `self.G` whose every assignment in the module is one of those. Spell the "
        "receiver as one of those, or migrate the wrapper's module too."),
    "GRL114": Code(
        "gradient code the rewrite would move uses a TensorFlow name TF2 does not have", REFUSAL, ERROR,
        "The gradient code the rewrite would move uses a TensorFlow name TF2 does not have in any form "
        '(docs/idioms.md, "Removed TensorFlow names"). Rewrite that line for TF2, then migrate again.'),
    "GRL115": Code(
        "function.Defun with a gradient the tool cannot turn into tf.custom_gradient inline", REFUSAL, ERROR,
        "A `function.Defun` whose gradient TF2 cannot take inline: the gradient reads of `op` more than "
        "`op.inputs` / `op.outputs` (`op.get_attr`, `op.type`), it is chosen at run time (a parameter, an "
        "attribute), it comes from a module outside the run (run the tool on both), the Defun is built in a"
        " loop, used other than as a decorator or in `name = Defun(...)(f)`, taken as a value, takes "
        "keywords the tool does not know, or code reads the function object's attributes (`f.name`, "
        "`f.add_to_graph`). Write `@tf.custom_gradient` by hand: `def f(x): y = forward(x); return y, "
        "lambda dy: ...`."),
    "GRL201": Code(
        "note: Keras 2 code in the migrated file that Keras 3 lacks and the tool could not respell",
        NOTE, NOTE_SEVERITY,
        "Keras 2 code in the migrated file that Keras 3 (TF >= 2.16) lacks and the tool could not respell "
        '(docs/idioms.md, "Keras 2 layer modules"): a name `keras.engine` held that neither `keras.layers` '
        "nor `keras.models` has (`Network`), a backend function neither Keras 3's nor `tf.keras`'s backend "
        "has (`K.get_session()` outside the override), `self.trainable_weights = []` in a layer that makes "
        "weights. Rewrite that line for Keras 3, or run under tf_keras."),
    "GRL202": Code(
        "note: a gradient registration no block of the file or of the run uses is kept as it is", NOTE, NOTE_SEVERITY,
        "A gradient registration that no override block of the file (or of the modules linked to it in this"
        " run) uses is kept as it is; if other modules use it, run the tool on them together, which "
        "migrates both ends."),
    "GRL203": Code(
        "note: an override map key that is no op type overrode nothing in TF1, nor after migration",
        NOTE, NOTE_SEVERITY,
        'A map key that cannot be an op type (TensorFlow\'s op types are CamelCase: `{"cast": ...}`, '
        '`{"clip_by_value": ...}`) overrode nothing in TF1, so the migration keeps nothing of it; the note '
        "says so, in case another gradient was meant (an op defined from a Python function takes that "
        "function's name as its type)."),
    "GRL204": Code(
        "note: the code a migrated site runs uses a TensorFlow name TF2 has in no form", NOTE, NOTE_SEVERITY,
        "The code a migrated site runs (its function, what a moved map's receiver was assigned) uses a "
        "TensorFlow name TF2 has in no form (`tf.contrib...`); the tool respells every name TF2 has under "
        "`tf.compat.v1` (`tf.variable_scope`, `tf.get_default_graph`), and names this one for a hand."),
    "GRL205": Code(
        "note: a function.Defun without a gradient of its own: TF2 gives it no gradient in a "
        "tf.function; kept", NOTE, NOTE_SEVERITY,
        "A `function.Defun` without a gradient of its own, kept as it is: TF2 runs a Defun rightly only "
        "inside a `tf.compat.v1` graph; eagerly it raises, and in a `tf.function` it runs with no gradient "
        "at all (`None`, no error). Drop the decorator (a plain function has TF1's forward values and "
        "gradients) or write `@tf.function`."),
    "GRL206": Code(
        "note: a migrated function.Defun's arguments TF2 has no use for (input types, func_name, "
        "...) dropped", NOTE, NOTE_SEVERITY,
        "A Defun the tool migrated, and what it dropped: the declared input types (TF2 takes the inputs' "
        "own dtypes, so pass tensors of the types the Defun declared); `func_name`, `noinline`, "
        "`shape_func`, `out_names` (TF2 makes no graph function, and knows the shapes from the ops)."),
    "GRL207": Code(
        "note: an override block makes no op of a mapped type: TF1 applied the map to nothing; it "
        "is removed", NOTE, NOTE_SEVERITY,
        'A block that makes no op of a type its map names (`{"Round": "Identity"}` around `tf.equal`): TF1 '
        "applied the map to nothing, so the map is removed and the block's code is kept as it was; the note"
        " says why the map vanished."),
    "GRL301": Code(
        "note: verified: the migrated site gives TF1's forward values and gradients (--verify)",
        VERIFICATION, NOTE_SEVERITY,
        "`--verify`: the migrated site gives TF1's forward values and gradients; the note names the "
        "callable, the shapes and values tried and the largest difference."),
    "GRL302": Code(
        "verification: the migrated site does not give TF1's forward values or gradients, or raises",
        VERIFICATION, ERROR,
        "`--verify`: the migrated site does not give TF1's values, or raises where the original ran. The "
        "file is not written; please report it. Under `--verify-against`, your port differs from the "
        "original."),
    "GRL303": Code(
        "note: not verifiable: the site could not be exercised (the reason says why)", VERIFICATION, NOTE_SEVERITY,
        "`--verify`: the site could not be exercised (the reason says why: a module it needs is missing, "
        "code runs at import, no callable reaches it); test it by hand, or pair names with `--verify-call`."),
    "GRL901": Code(
        "cannot read or decode file", FAILURE, ERROR,
        "The file cannot be read or decoded (permissions, an unknown encoding cookie); it is left as it is."),
    "GRL902": Code(
        "cannot parse file", FAILURE, ERROR,
        "The file does not parse as Python 3 (a Python 2 file: run 2to3 first); it is left as it is and the"
        " rest of the tree is processed."),
    "GRL903": Code(
        "internal error while transforming file", FAILURE, ERROR,
        "An internal error of the tool while transforming the file; it is left as it is. Please report it."),
    "GRL904": Code(
        "rewrite failed the safety check", FAILURE, ERROR,
        "The rewrite failed the tool's own safety check (the output would not parse, would change again on "
        "a second run, or would drop code that is not override machinery); nothing is written. Please "
        "report it."),
    "GRL905": Code(
        "cannot write file", FAILURE, ERROR,
        "The file cannot be written (read-only, the disk is full, it changed on disk meanwhile); it is left"
        " as it was."),
    "GRL906": Code(
        "notebook cannot be written back exactly", FAILURE, ERROR,
        "The migrated notebook cannot be written back exactly in its own JSON layout; it is left as it was."),
    "GRL907": Code(
        "file over the size limit (64 MiB), skipped unread", FAILURE, ERROR,
        "The file is larger than 64 MiB (a sparse or generated file beside the code): it is skipped unread,"
        " and the rest of the tree is processed. Split it if it is code to migrate."),
}
CODES = {code: entry.title for code, entry in TABLE.items()}  # code -> title (what docs and --explain show)
