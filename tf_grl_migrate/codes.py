"""The one table of diagnostic codes: code -> its title, its kind (refusal, note, verification,
failure), its severity, its explanation (when the tool says it and what to do: what ``--explain``
prints, and what docs/idioms.md and docs/usage.md are generated from, by
tools/generate_code_docs.py) and its messages: each thing it says, a one-line sentence and its
details as templates (``Message``), by the name the check that says it passes (``say``, through
``Refusal.of`` and ``Diagnostic.said``) with the fields the templates read. Nothing reads a
code's digits or a message's text for its meaning; hints are fields of their own
(report.Diagnostic.hints). Each 1xx/2xx code is owned by one idiom
(tf_grl_migrate/migrator/idioms), which holds an example of it; 9xx belong to the file layer
(files.py, notebooks.py, api.py), as does GRL112. tests/test_idioms.py checks the owners and runs
the examples; tests/test_codes.py checks that every code is documented from here and tested, and
that each message is said somewhere, with the fields it reads."""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import NamedTuple


class Kind(NamedTuple):
    name: str
    meaning: str  # what --explain says of every code of the kind


REFUSAL = Kind("refusal", "a refusal: the site is left unchanged (--check exits 1, --write exits 1)")
NOTE = Kind("note", "a note on a migrated file (nothing refused)")
VERIFICATION = Kind("verification", "verification (--verify)")
FAILURE = Kind("failure", "a file the tool could not process (exit 123; the rest of the tree is processed)")
ERROR, NOTE_SEVERITY = "error", "note"  # severities


class Message(NamedTuple):
    """One thing a code says, as ``str.format`` templates over the fields the check that says it
    passes (``say``): ``sentence`` the diagnostic's one line (what is wrong here, the one thing to
    do), ``details`` the rest (why; the JSON's ``details``)."""

    sentence: str
    details: str = ""

    def fields(self) -> set[str]:
        """The names its templates read."""
        return {name for text in self for _, name, _, _ in Formatter().parse(text) if name}


class Code(NamedTuple):
    title: str
    kind: Kind
    severity: str  # "error" (--check fails, the JSON says so) or "note"
    explanation: str = ""  # when the tool says it and what to do (--explain; docs/idioms.md is made from it)
    messages: Mapping[str, Message] = {}  # what it says, by the name the check that says it passes to say()


def say(code: str, key: str, **fields: object) -> tuple[str, str]:
    """The sentence and details ``code`` says as its message ``key``, filled with ``fields``, each
    on one line (tests/test_codes.py checks that each call passes exactly the fields its message
    reads)."""
    message = TABLE[code].messages[key]
    return _one_line(message.sentence.format(**fields)), _one_line(message.details.format(**fields))


def _one_line(text: str) -> str:
    """A field's line breaks (code quoted from several lines, an exception's text) as spaces: a
    diagnostic is one line and its details one paragraph."""
    return " ".join(part.strip() for part in text.splitlines()) if "\n" in text else text


# what GRL101's details say of a model-wide map: the same map entered through the runtime
# how details that give the runtime map by hand begin (idioms.runtime_hint says where it would not do either)
RECIPE_OPENING = "Or keep the registrations and enter the same map through the runtime"
_RECIPE = (RECIPE_OPENING + ", which gives TF2 TF1's meaning: "
           "`with tf_grl_migrate.gradient_override_map({map}):` around the same code (docs/runtime.md: \"Guided "
           "backprop and other model-wide overrides\").")
_IGNORED = "TF2 ignores gradient_override_map."
# sentences two messages of a code share (they differ in their details)
_NO_REGISTRATION = ("override target {target} matches no @RegisterGradient here or in the run: define it with "
                    "@tf.custom_gradient")
_UNKNOWN_OP = "op type '{op}' is not in the tool's op table: wrap that op with @tf.custom_gradient"
_OUT_OF_SIGHT = ("the gradient registered as {name} is defined where this block cannot see it: move it to module level "
                 "and migrate again")
_TF2_LACKS = "note: `{name}` runs where the migrated code does and TF2 lacks it: rewrite that line for TF2"
_NOT_CAMEL_CASE = ("Op types are CamelCase, such as 'Cast' or 'Maximum'; the migrated code overrides nothing for it "
                   "either.")  # GRL203's details


# GRL901's and GRL907's "port": the port --verify-against reads cannot be read, in that code's words (``why``)
_PORT = Message("the migrated file {path}: {why}")


def _defun(why: str, fix: str = "write its @tf.custom_gradient by hand") -> Message:
    """A GRL115 message: why the Defun is refused, the fix, and what every such refusal adds."""
    return Message(f"{why}: {fix}", "A Defun's gradient becomes tf.custom_gradient inline only where it reads "
                                    'op.inputs and op.outputs; docs/idioms.md, "Defun", shows the shape to write.')


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
        "`from m import *`, `with some_object:`, `async for/with`; or it holds another override block (the "
        "tool does not join two maps). The override applies to every op of that"
        " type created there, so the tool cannot say which ops to wrap. Wrap the ops the called code makes "
        "with `@tf.custom_gradient`, or (a model-wide map) run with `--use-runtime`, which enters the same "
        "map through `tf_grl_migrate.gradient_override_map`.",
        messages={
            "hands_control": Message(
                "the block hands control to `{what}` (line {line}), code the tool cannot see: wrap the ops made "
                "there with @tf.custom_gradient",
                "TF1 overrides {mapped} ops created there too, and TF2 ignores gradient_override_map. " + _RECIPE),
            "defines": Message(
                "the override block defines a function or class; ops it creates later may or may not be "
                "overridden, so migrate this block by hand with @tf.custom_gradient"),
            "calls_unseen": Message(
                "the block calls {callee}, which may create {mapped} ops the tool cannot see: wrap them with "
                "@tf.custom_gradient",
                _IGNORED + " " + _RECIPE),
            "calls_by_rank": Message(
                "the block calls {callee}, which creates {rank2} or {rank3} by input rank, so which ops TF1 "
                "overrode is unknown: wrap them with @tf.custom_gradient",
                "It creates {rank2} for rank-2 inputs but {rank3} for rank-3 ones; for one input rank only, a "
                "rank-exact spelling such as gen_math_ops.mat_mul can be migrated. " + _IGNORED + " " + _RECIPE),
            "calls_among_others": Message(
                "the block calls {callee}, which creates {hit} ops among others, which the tool cannot wrap one "
                "by one: wrap them with @tf.custom_gradient",
                _IGNORED + " " + _RECIPE),
            "calls_untraced": Message(
                "the block calls {callee}, which may create {mapped} ops a trace does not show: wrap them with "
                "@tf.custom_gradient",
                "TensorFlow adds Identity ops by itself. " + _IGNORED + " " + _RECIPE),
            "nested_map": Message(
                "the block holds another override block (line {line}), where both maps apply: wrap the ops made "
                "there with @tf.custom_gradient",
                "The tool does not join two maps; TF1 gave an op made in the inner block the inner map's gradient"
                " for its types and the outer map's for the others. " + _RECIPE),
        }),
    "GRL102": Code(
        "override target cannot be matched to a gradient registration", REFUSAL, ERROR,
        "The override target cannot be matched to a registration in the module (or, in a run over a tree, "
        "in a module it imports): no registration has that name, or the target is a name whose values the "
        "tool cannot list (a parameter of a public function, or one a call passes a variable for, a "
        "computed string, a value that may be None with no `if name:` guard). Run the tool on the module "
        "that registers the gradient together with this one, or write the gradient with "
        "`@tf.custom_gradient`.",
        messages={
            "ambiguous": Message(
                "override target {target} matches {count} registrations; the tool cannot tell which one TF1 used"),
            "no_registration": Message(
                _NO_REGISTRATION,
                "The tool looked in this module and the modules of this run it imports."),
            "no_registration_why": Message(
                _NO_REGISTRATION,
                "The tool looked in this module and the modules of this run it imports ({why})."),
            "tensorflow_gradient": Message(
                "override target {target} names TensorFlow's own gradient for '{op}' ops, which the tool does not "
                "borrow: write the gradient you meant with @tf.custom_gradient",
                "TF1 called the gradient function TensorFlow registers for '{op}' (if any) with the overridden op; "
                "the tool borrows only gradients whose math it knows ('Identity', 'Add', ...)."),
            "may_be": Message(
                "override target {target} may be {value!r}: define that gradient with @tf.custom_gradient",
                "{value!r} matches {count} registration(s) in this module."),
            "name_taken": Message(
                "the gradient is registered in {file} as `{function}`, which is already a name in this module; "
                "import it under another name and migrate again"),
            "not_imported": Message(
                "the gradient is registered in {file}, which this module does not import (TF1 only needed it "
                "imported somewhere); import it here and migrate again"),
        }),
    "GRL103": Code(
        "gradient function uses op features tf.custom_gradient cannot supply", REFUSAL, ERROR,
        "The gradient function uses what `tf.custom_gradient` cannot supply (`op.get_attr`, `op.node_def`, "
        "...): a TF2 gradient sees the op's inputs and outputs, not the op. Rewrite the gradient to read "
        "only `op.inputs` and `op.outputs`, or write it with `@tf.custom_gradient` by hand.",
        messages={
            "op_feature": Message(
                "gradient function `{function}` (line {line}) uses `{shown}`: rewrite it with @tf.custom_gradient",
                "tf.custom_gradient cannot supply it: only op.inputs, op.inputs[i], op.outputs and op.outputs[0] "
                "map onto a custom gradient."),
            "later_output": Message("gradient function `{function}` reads op.outputs[{index}]"),
        }),
    "GRL104": Code(
        "op type not in the op table", REFUSAL, ERROR,
        'The op type is not one the generated op table can wrap (docs/idioms.md, "The op table"), and the '
        "block may make it (a block whose calls provably make none of it gets GRL207's note instead: TF1 "
        "applied that entry to nothing). Wrap that op with `@tf.custom_gradient` by hand; "
        "`--use-runtime` takes a map the runtime can apply to any op type.",
        messages={
            "unknown_op": Message(_UNKNOWN_OP, _IGNORED),
            "unknown_op_runtime": Message(
                _UNKNOWN_OP + " (--use-runtime migrates it)",
                "TF2 ignores gradient_override_map; `--use-runtime` keeps the registrations and enters "
                "tf_grl_migrate.gradient_override_map (TF1's meaning for '{op}' ops too)."),
            "unknown_op_py_func": Message(
                _UNKNOWN_OP,
                "TF2 ignores gradient_override_map; where the block is the py_func recipe "
                "(`tf.RegisterGradient(name)(grad)`, then one `tf.py_func(...)` under the map), `--use-runtime` "
                "migrates it to tf_grl_migrate.py_func(..., grad=grad): tf.numpy_function under tf.custom_gradient."),
        }),
    "GRL105": Code(
        "override map is not a literal dict", REFUSAL, ERROR,
        "The override map is not a dict literal, or is a variable that something can change between binding"
        ' and use (`m["Sign"] = "Identity"`, `m.update(...)`, `setdefault`, a loop filling it, passed to a '
        "function): every use of the variable must be a `gradient_override_map(...)` argument. Write the "
        "map as a literal at the `with`.",
        messages={
            "changed": Message(
                "override map `{map}` is changed after it is built (line {line}): build it as one literal, or rewrite "
                "the block with @tf.custom_gradient",
                "Line {line}, `{statement}`, changes or shares it, so the literal is not what TF1 used."),
            "not_one_dict": Message("gradient_override_map call does not take one dict argument"),
            "not_literal": Message(
                "override map `{map}` is not a dict literal the tool can read: rewrite the block with "
                "@tf.custom_gradient"),
            "key_not_string": Message("override map has a key that is not a string literal"),
        }),
    "GRL106": Code(
        "gradient registration cannot be converted", REFUSAL, ERROR,
        "A gradient registration the tool cannot turn into a `@tf.custom_gradient` function: a registration"
        " made by a factory or under a name bound twice, one used for op types with different numbers of "
        "inputs, a function that does not take `(op, grad)`, or one other modules use that cannot keep its "
        "own name. Write that gradient with `@tf.custom_gradient` by hand.",
        messages={
            "not_found": Message("cannot find the gradient function registered by `{registration}`"),
            "signature": Message(
                "gradient function `{function}` does not take exactly (op, grad): write its @tf.custom_gradient by "
                "hand"),
            "signature_short": Message(
                "gradient function `{function}` does not take exactly (op, grad): give it the signature (op, grad) "
                "and migrate again",
                "TF1 calls a registered gradient as fn(op, grad), so this one fails there too when the gradient is "
                "taken."),
            "decorators": Message(
                "gradient function `{function}` has other decorators besides its registration; migrate it by hand"),
            "unanalysable": Message("cannot analyse gradient function `{function}`"),
            "name_shared": Message(
                "`{function}` names more than one function here: give each gradient function its own name and "
                "migrate again",
                "The name is read (line {line}), so renaming either would break that."),
            "arities": Message(
                "`{function}` is the override gradient of op types with different numbers of inputs ({ops}); "
                "migrate it by hand"),
            "arities_elsewhere": Message("it is used for op types with different numbers of inputs"),
            "factory": Message("`{function}` is returned by a factory and {why}; migrate it by hand"),
            "exported_renamed": Message(
                "`{function}` is used from other modules ({users}) but cannot be converted under its own name; "
                "migrate it by hand"),
        }),
    "GRL107": Code(
        "registration not visible where it is used", REFUSAL, ERROR,
        "The registration is not visible where the map uses it: it is defined after the block, or where the"
        " block cannot see it (a nested scope, a decorated or rebound class, a class the use is outside "
        "of). Move the registration to module level above the block, then migrate again.",
        messages={
            "out_of_sight": Message(_OUT_OF_SIGHT),
            "out_of_sight_in_class": Message(
                _OUT_OF_SIGHT,
                "A class body's gradient function is called as `Class.function` only from the methods of a plain, "
                "undecorated module-level class bound once."),
            "after_block": Message(
                "the gradient registered as {name} is defined after this block (line {line}): move the "
                "registration above it and migrate again",
                "The migrated call would run before its function exists."),
        }),
    "GRL108": Code(
        "overridden op created in a form the tool cannot rewrite", REFUSAL, ERROR,
        "The overridden op is created in a form the tool cannot rewrite: a keyword it cannot pass on "
        "(`tf.identity(x, name=f(y))`), or an operator (`*`, `-`) whose operands are not provably "
        "TensorFlow tensors. Spell the op as a call with positional arguments, or write it with "
        "`@tf.custom_gradient`.",
        messages={
            "bound_as": Message("the override context is bound with `as`; rewrite the block by hand"),
            "operator": Message(
                "'{op}' ops made by the `{operator}` operator are overridden: rewrite them with @tf.custom_gradient",
                "The tool wraps `*` and binary `-` only when one operand is the result of a TensorFlow call that "
                "returns a tensor and the gradient is TensorFlow's two-input 'Add' or a registration of this "
                "module."),
            "arguments": Message(
                "`{call}` passes arguments the rewrite cannot forward: rewrite it with @tf.custom_gradient",
                "Only {arity} positional input(s) and `name=` are forwarded."),
            "name_value": Message(
                "`name={value}` in `{call}` is not a plain name, attribute or literal the generated function can "
                "read; rewrite it by hand with @tf.custom_gradient"),
            "operator_unalike": Message(
                "`{function}` is the gradient of ops made by an operator (`a - b`) and used unalike: rewrite these "
                "with @tf.custom_gradient",
                "Here {why}; the tool wraps an operator only for a registration used alike everywhere."),
        }),
    "GRL109": Code(
        "override target is a TensorFlow gradient that reads another number of op inputs", REFUSAL, ERROR,
        "The map borrows a TensorFlow gradient that reads another number of op inputs than the overridden "
        'op has (`{"Sign": "Add"}`: Add\'s gradient reads two inputs, Sign has one). TF1 would have failed '
        "or read the wrong input; write the gradient you meant with `@tf.custom_gradient`.",
        messages={
            "ambiguous": Message(
                "'{gradient}' as the gradient of the {arity}-input op '{op}' is ambiguous; write its "
                "@tf.custom_gradient by hand"),
            "arity": Message(
                "TensorFlow's '{gradient}' gradient reads {reads} op inputs, '{op}' ops have {arity}: write the "
                "intended @tf.custom_gradient",
                "TF1 failed when it took this gradient."),
        }),
    "GRL110": Code(
        "another use of the same registration could not be migrated", REFUSAL, ERROR,
        "Another use of the same registration could not be migrated, so this one is kept too: a "
        "registration is converted for all its uses or for none, in this module or, in a run over a tree, "
        "in the modules linked to it. Fix the refusal the message names, then migrate again.",
        messages={
            "other_block": Message(
                "another block using the same gradient registration could not be migrated, so this one is left as "
                "it is too"),
            "other_block_elsewhere": Message(
                "another block using the gradient registered as {name} (in {file}) could not be migrated, so this "
                "one is left as it is too"),
            "kept": Message("the gradient registered as {name} is kept as it is: {why}", "{details}"),
            "kept_elsewhere": Message(
                "the gradient registered as {name} in {file} is kept as it is: {why}", "{details}"),
            "kept_by": Message(
                "the gradient registered as {name} in {file} is kept as it is: {why} (in {origin})", "{details}"),
            "use_not_migrated": Message("its use in {file} is not migrated ({why})", "{details}"),
            "runtime_kept": Message(
                "a block moved onto tf_grl_migrate.gradient_override_map (--use-runtime) may name this "
                "registration, so it is kept as it is"),
        }),
    "GRL111": Code(
        "gradient_override_map used outside a with statement", REFUSAL, ERROR,
        "`gradient_override_map` is entered outside a `with` statement (`ctx = g.gradient_override_map(...)`;"
        " any receiver, wrappers included), taken as a value (`enter = g.gradient_override_map`, "
        "`getattr(g, \"gradient_override_map\")`), or the graph's private `_gradient_override_map` dict is used "
        "directly. TF2 ignores the map however it is entered. Rewrite the affected ops with "
        "`@tf.custom_gradient`; where the hint says so, `--use-runtime` moves the map onto "
        "`tf_grl_migrate.gradient_override_map`.",
        messages={
            "outside_with": Message(
                "gradient_override_map is entered outside a `with` statement: rewrite the affected ops with "
                "@tf.custom_gradient",
                "TF2 ignores the map however it is entered."),
            "taken_as_value": Message(
                "a graph's gradient_override_map is taken as a value: rewrite the affected ops with "
                "@tf.custom_gradient",
                "It is entered where the tool cannot follow it, and TF2 ignores it however it is entered."),
            "private_map": Message(
                "this code uses the graph's private `_gradient_override_map` dict: rewrite the affected ops with "
                "@tf.custom_gradient",
                "TF2 ignores it like the map itself; tf_grl_migrate.override_gradients, where the gradient is "
                "taken, is the other way."),
        }),
    "GRL112": Code(
        "notebook cell that is not Python (%%bash, ...) or does not parse holds an override", REFUSAL, ERROR,
        "An override in a notebook cell that is not Python (`%%bash`, `%%writefile`, ...) or that does not "
        "parse. The tool leaves the cell as it is; make it a Python cell, or migrate that code by hand.",
        messages={
            "not_python": Message(
                "this cell is not Python (a cell magic such as %%bash) or does not parse, so its gradient override "
                "was not migrated; migrate it by hand with @tf.custom_gradient"),
        }),
    "GRL113": Code(
        "gradient_override_map that is not provably tf.Graph's (a wrapper, or an unresolved "
        "receiver)", REFUSAL, ERROR,
        "A `gradient_override_map` that is not provably `tf.Graph`'s: a wrapper named like the API (`from "
        "lucid.misc.gradient_override import gradient_override_map`, also under another name), or a "
        "receiver the tool cannot resolve to a graph (a parameter, `helper.ctx`). Graphs it can prove: "
        "`x.graph`, `sess.graph`, `K.get_session().graph`, `tf.get_default_graph()`, `tf.Graph()`, names "
        "bound to those (in every branch that reaches the use, or `with tf.Graph().as_default() as g`), "
        "attributes such as `self.G` whose every assignment in the module is one of those. Spell the "
        "receiver as one of those, or migrate the wrapper's module too.",
        messages={
            "not_a_graph": Message(
                "`{func}` is not provably a tf.Graph's map: wrap the ops with @tf.custom_gradient, or bind the graph "
                "in view",
                "It is a wrapper, or a receiver the tool cannot resolve to a graph (`g = tf.get_default_graph()` in "
                "view resolves it); TF2 ignores graph gradient overrides however they are entered."),
        }),
    "GRL114": Code(
        "gradient code the rewrite would move uses a TensorFlow name TF2 does not have", REFUSAL, ERROR,
        "The gradient code the rewrite would move uses a TensorFlow name TF2 does not have in any form "
        '(docs/idioms.md, "Removed TensorFlow names"). Rewrite that line for TF2, then migrate again.',
        messages={
            "removed": Message(
                "gradient function `{function}` (line {line}) uses `{name}`, removed in TF 1.0: rewrite that line, "
                "then migrate again",
                "TF2 has no replacement for it."),
            "missing": Message(
                "gradient function `{function}` (line {line}) uses `{name}`, which TF2 lacks: rewrite that line, "
                "then migrate again",
                "TensorFlow {tf} does not have {qualified}."),
            "keywords": Message(
                "gradient function `{function}` (line {line}) calls `{callee}` in a way TF2 does not take: rewrite "
                "that call, then migrate again",
                "TensorFlow {tf}: {why}."),
        }),
    "GRL115": Code(
        "function.Defun with a gradient the tool cannot turn into tf.custom_gradient inline", REFUSAL, ERROR,
        "A `function.Defun` whose gradient TF2 cannot take inline: the gradient reads of `op` more than "
        "`op.inputs` / `op.outputs` (`op.get_attr`, `op.type`), it is chosen at run time (a parameter, an "
        "attribute), it comes from a module outside the run (run the tool on both), the Defun is built in a"
        " loop, used other than as a decorator or in `name = Defun(...)(f)`, taken as a value, takes "
        "keywords the tool does not know, a call of the function passes keywords other than a `name=` "
        "(which goes: it named TF1's op) or, from another module of the run, any keyword, or code reads "
        "the function object's attributes (`f.name`, `f.add_to_graph`). Write `@tf.custom_gradient` by "
        "hand: `def f(x): y = forward(x); return y, lambda dy: ...`.",
        messages={
            "taken_as_value": _defun("`{name}` is taken as a value (line {line}), not called where the tool can "
                                     "follow it"),
            "grad_func_refused": _defun("it is the grad_func of `{name}`, which is not migrated"),
            "in_loop": _defun("the Defun is built in a loop, a new graph function each time"),
            "decorates_class": _defun("the Defun decorates a class, not a function"),
            "decorators": _defun("`{function}` has other decorators besides the Defun"),
            "other_use": _defun("the Defun at line {line} is used other than as a decorator or in "
                                "`name = Defun(...)(f)`"),
            "rebinds": _defun("`{name} = Defun(...)({name})` rebinds the function's own name"),
            "bound_twice": _defun("`{name}` is bound more than once where the Defun is made"),
            "wraps_expression": _defun("the Defun wraps `{wrapped}`, not a function the tool can name"),
            "star_keywords": _defun("the Defun takes keywords from `**` the tool cannot read"),
            "unknown_keyword": _defun("the Defun takes `{keyword}=`, which the tool does not know"),
            "not_provable": _defun("`{shown}` ({origin}) is not provably TensorFlow's function.Defun"),
            "both_gradients": _defun("the Defun has both python_grad_func= and grad_func="),
            "grad_func": _defun("its grad_func `{grad_func}` is not a Defun of this module without a gradient of "
                                "its own"),
            "parameters": _defun("`{function}` takes keyword-only, `**`, positional-only or defaulted parameters, "
                                 "which a Defun never passes"),
            "attribute_read": _defun("line {line} reads `{attribute}`, an attribute of TF1's function object, which "
                                     "a TF2 function does not have"),
            "gradient_decorated": _defun("the gradient function `{function}` is decorated"),
            "gradient_chosen": _defun("the gradient `{gradient}` is chosen at run time, not a function of this "
                                      "module"),
            "lambda_signature": _defun("the gradient lambda does not take (op, *grads)"),
            "gradient_signature": _defun("the gradient function `{function}` does not take (op, *grads)"),
            "lambda_op_use": _defun("the gradient lambda (line {line}) uses `{shown}`, not only op.inputs and "
                                    "op.outputs"),
            "gradient_op_use": _defun("the gradient function `{function}` (line {line}) uses `{shown}`, not only "
                                      "op.inputs and op.outputs"),
            "outside_run": _defun("the gradient `{gradient}` comes from a module outside this run",
                                  "run the tool on that module too (or write its @tf.custom_gradient by hand)"),
            "imported_refused": _defun("the gradient `{gradient}` ({file}): {why}"),
            "call_keywords": _defun("the call at line {line} passes `{shown}`, which the migrated function cannot "
                                    "take", "pass only its inputs, by position, then migrate again"),
            "attribute_read_elsewhere": _defun("{where} reads `{attribute}`, an attribute of TF1's function object, "
                                               "which a TF2 function does not have"),
            "call_keywords_elsewhere": _defun("{where} calls `{name}` with `{shown}`, which the migrated "
                                              "function cannot take", "pass only its inputs there, by position, "
                                              "then migrate again"),
        }),
    "GRL116": Code(
        "override map names an op type TensorFlow has since replaced for the code in the block", REFUSAL, ERROR,
        "The map names an op type the block makes none of, while it makes a later version of that type "
        '(`{"Add": ...}` around `a + b`, which made an \'Add\' op before TF 1.15 and makes \'AddV2\' since). '
        "Under the TF1 that made the older type the entry overrode its gradient; under one that makes the "
        "newer type it overrode nothing. Which gradient the model trained with depends on the TensorFlow it "
        "ran on, so the tool does not choose: name the newer type in the map to keep the override, or remove "
        "the entry, then migrate again.",
        messages={
            "renamed": Message(
                "the map names '{entry}' but `{made_by}` makes '{made}' here: map '{made}' to keep the override, or "
                "drop '{entry}'",
                "TensorFlow moved this code from '{entry}' to '{made}', a later version of the op: a TF1 that made "
                "'{entry}' here applied the entry; one that makes '{made}', as TF2 does, applied it to nothing."),
        }),
    "GRL201": Code(
        "note: Keras 2 code in the migrated file that Keras 3 lacks and the tool could not respell",
        NOTE, NOTE_SEVERITY,
        "Keras 2 code in the migrated file that Keras 3 (TF >= 2.16) lacks and the tool could not respell "
        '(docs/idioms.md, "Keras 2 layer modules"): a name `keras.engine` held that neither `keras.layers` '
        "nor `keras.models` has (`Network`), a backend function neither Keras 3's nor `tf.keras`'s backend "
        "has (`K.get_session()` outside the override), `self.trainable_weights = []` in a layer that makes "
        "weights. Rewrite that line for Keras 3, or run under tf_keras.",
        messages={
            "several_imports": Message(
                "note: `{statement}` holds several imports Keras 3 needs respelled; put each on a line of its own "
                "and migrate again"),
            "backend_line": Message(
                "note: `{statement}`: import `backend` on a line of its own and migrate again (this module calls "
                "what only tensorflow.keras's backend still has)"),
            "engine_import": Message(
                "note: `{statement}`: Keras 3 (TF >= 2.16) removed {module}; import what it needs from keras.layers "
                "or keras.models"),
            "engine_star": Message(
                "note: `{statement}`: Keras 3 (TF >= 2.16) removed {module}; import the names this module uses "
                "from {root}.layers or {root}.models"),
            "engine_missing": Message(
                "note: Keras 3 has no {missing} where `{statement}` finds it: import what the module needs from "
                "where Keras 3 has it",
                "Keras 3 (TF >= 2.16) removed {module}, and {homes} have no {missing}."),
            "engine_split": Message(
                "note: `{statement}`: Keras 3 (TF >= 2.16) removed {module}; import {names} from {home} and the "
                "rest from where Keras 3 has them, on lines of their own"),
            "backend_gone": Message(
                "note: `{name}`: Keras 3 (TF >= 2.16) has no keras.backend.{attr}, nor does tf.keras's backend "
                "(TF2 has no sessions or placeholders): write it for TF2"),
            "weight_lists": Message(
                "note: `{statement}`: Keras 3 (TF >= 2.16) lets no layer set its weight lists, and this layer makes "
                "weights: make those that must not train with add_weight(..., trainable=False) and drop the line"),
        }),
    "GRL202": Code(
        "note: a gradient registration no block of the file or of the run uses is kept as it is", NOTE, NOTE_SEVERITY,
        "A gradient registration that no override block of the file (or of the modules linked to it in this"
        " run) uses is kept as it is; if other modules use it, run the tool on them together, which "
        "migrates both ends.",
        messages={
            "unused": Message(
                "note: the gradient registered as {name} is used by no block of this file and is kept; run the tool "
                "on the modules that use it together",
                "If other modules use it, running them with this one migrates both ends."),
        }),
    "GRL203": Code(
        "note: an override map key that is no op type overrode nothing in TF1, nor after migration",
        NOTE, NOTE_SEVERITY,
        'A map key that cannot be an op type (TensorFlow\'s op types are CamelCase: `{"cast": ...}`, '
        '`{"clip_by_value": ...}`) overrode nothing in TF1, so the migration keeps nothing of it; the note '
        "says so, in case another gradient was meant (an op defined from a Python function takes that "
        "function's name as its type).",
        messages={
            "phantom_keys": Message(
                "note: {keys} in this map is no op type, so TF1 overrode nothing for it; if another gradient was "
                "meant, write that gradient with @tf.custom_gradient",
                _NOT_CAMEL_CASE),
            "phantom_keys_like": Message(
                "note: {keys} in this map is no op type, so TF1 overrode nothing for it; if '{meant}' ops was "
                "meant, write that gradient with @tf.custom_gradient",
                _NOT_CAMEL_CASE),
        }),
    "GRL204": Code(
        "note: the code a migrated site runs uses a TensorFlow name TF2 has in no form", NOTE, NOTE_SEVERITY,
        "The code a migrated site runs (its function, what a moved map's receiver was assigned) uses a "
        "TensorFlow name TF2 has in no form (`tf.contrib...`); the tool respells every name TF2 has under "
        "`tf.compat.v1` (`tf.variable_scope`, `tf.get_default_graph`), and names this one for a hand.",
        messages={
            "tf2_lacks": Message(
                _TF2_LACKS,
                "TensorFlow 2 has no {qualified} in any form."),
            "tf2_lacks_removed": Message(
                _TF2_LACKS,
                "TensorFlow 2 has no {qualified} in any form (it was removed in 1.0)."),
        }),
    "GRL205": Code(
        "note: a function.Defun without a gradient of its own: TF2 gives it no gradient in a "
        "tf.function; kept", NOTE, NOTE_SEVERITY,
        "A `function.Defun` without a gradient of its own, kept as it is: TF2 runs a Defun rightly only "
        "inside a `tf.compat.v1` graph; eagerly it raises, and in a `tf.function` it runs with no gradient "
        "at all (`None`, no error). Drop the decorator (a plain function has TF1's forward values and "
        "gradients) or write `@tf.function`.",
        messages={
            "no_gradient": Message(
                "note: `{name}` is a Defun with no gradient of its own, kept: drop the decorator, or write "
                "@tf.function",
                "Under TF2 a Defun raises eagerly and, in a tf.function, runs with no gradient (None, no error); a "
                "plain function has TF1's forward values and gradients."),
        }),
    "GRL206": Code(
        "note: a migrated function.Defun's arguments TF2 has no use for (input types, func_name, "
        "...) dropped", NOTE, NOTE_SEVERITY,
        "A Defun the tool migrated, and what it dropped: the declared input types (TF2 takes the inputs' "
        "own dtypes, so pass tensors of the types the Defun declared); `func_name`, `noinline`, "
        "`shape_func`, `out_names` (TF2 makes no graph function, and knows the shapes from the ops).",
        messages={
            "converted": Message(
                "note: the Defun `{name}` is now a @tf.custom_gradient function, without {shown}",
                "Dropped: {dropped}."),
        }),
    "GRL207": Code(
        "note: an override block makes no op of a mapped type: TF1 applied the map to nothing; it "
        "is removed", NOTE, NOTE_SEVERITY,
        'A block that makes no op of a type its map names (`{"Round": "Identity"}` around `tf.equal`): TF1 '
        "applied the map to nothing, so the map is removed and the block's code is kept as it was; the note"
        " says why the map vanished. An entry the block makes no op for, beside others it does "
        '(`{"Round": "Identity", "Sign": "Identity"}` around `tf.round`), gets the note too: it goes with '
        "the map.",
        messages={
            "no_op": Message(
                "note: the block makes no {mapped} op, so TF1 applied this map to nothing; the map is removed and "
                "the block's code kept"),
            "no_op_entry": Message(
                "note: the block makes no {mapped} op, so TF1 applied the map's '{mapped}' entry to nothing; it goes "
                "with the map"),
        }),
    "GRL301": Code(
        "note: verified: the migrated site gives TF1's forward values and gradients (--verify)",
        VERIFICATION, NOTE_SEVERITY,
        "`--verify`: the migrated site gives TF1's forward values and gradients; the note names the "
        "callable, the shapes and values tried and the largest difference.",
        messages={
            "verified": Message("verified {called}: max |diff| {diff}"),
            "verified_clipped": Message("verified {called}: max |diff| {diff}", "Verified {whole}."),
            "verified_noted": Message("verified {called}: max |diff| {diff} ({note})"),
            "verified_noted_clipped": Message("verified {called}: max |diff| {diff} ({note})", "Verified {whole}."),
        }),
    "GRL302": Code(
        "verification: the migrated site does not give TF1's forward values or gradients, or raises",
        VERIFICATION, ERROR,
        "`--verify`: the migrated site does not give TF1's values, or raises where the original ran. The "
        "file is not written; please report it. Under `--verify-against`, your port differs from the "
        "original.",
        messages={
            "differs": Message(
                "differs {called}: {reason}; not written: please report it",
                "The migration changed what this code computes, so the file is not written (report it to "
                "tf-grl-migrate): {whole}."),
            "differs_by_hand": Message(
                "differs {called}: {reason}", "The migrated code does not compute what the original did: {whole}."),
        }),
    "GRL303": Code(
        "note: not verifiable: the site could not be exercised (the reason says why)", VERIFICATION, NOTE_SEVERITY,
        "`--verify`: the site could not be exercised (the reason says why: a module it needs is missing, "
        "code runs at import, no callable reaches it); test it by hand, or pair names with `--verify-call`.",
        messages={
            "not_verifiable": Message("not verifiable {called}: {reason}; test this site by hand"),
            "not_verifiable_clipped": Message("not verifiable {called}: {reason}; test this site by hand", "{whole}"),
        }),
    "GRL901": Code(
        "cannot read or decode file", FAILURE, ERROR,
        "The file cannot be read or decoded (permissions, an unknown encoding cookie); it is left as it is.",
        messages={
            "cannot_read": Message("cannot read: {error}"),
            "cannot_decode": Message("cannot decode: {error}"),
            "notebook": Message("cannot read notebook: {error}"),
            "script_notebook": Message("this .ipynb holds Python source, not a notebook's JSON (a notebook exported as "
                                       "a script): rename it to .py, then migrate again"),
            "port": _PORT,
        }),
    "GRL902": Code(
        "cannot parse file", FAILURE, ERROR,
        "The file does not parse as Python 3 (a Python 2 file: run 2to3 first); it is left as it is and the"
        " rest of the tree is processed.",
        messages={
            "cannot_parse": Message("cannot parse: {error}"),
            "nul_byte": Message("cannot parse: a NUL byte (binary data?)"),
            "python2": Message(
                "cannot parse: this file is Python 2 ({what} on line {line}): convert it to Python 3, then migrate "
                "again",
                "To convert it: `pip install fissix` then `python -m fissix -w FILE` (the maintained lib2to3), or "
                "`2to3 -w FILE` on Python 3.12 and older. Python says: {error}."),
        }),
    "GRL903": Code(
        "internal error while transforming file", FAILURE, ERROR,
        "An internal error of the tool while transforming the file; it is left as it is. Please report it.",
        messages={
            "too_deep": Message("file is too deeply nested to transform"),
            "internal": Message("internal error ({kind}: {error}); please report it"),
        }),
    "GRL904": Code(
        "rewrite failed the safety check", FAILURE, ERROR,
        "The rewrite failed the tool's own safety check (the output would not parse, would change again on "
        "a second run, or would drop code that is not override machinery); nothing is written. Please "
        "report it.",
        messages={
            "unsafe": Message("{reason}"),
        }),
    "GRL905": Code(
        "cannot write file", FAILURE, ERROR,
        "The file cannot be written (read-only, the disk is full, it changed on disk meanwhile); it is left"
        " as it was.",
        messages={
            "cannot_write": Message("cannot write: {error}"),
        }),
    "GRL906": Code(
        "notebook cannot be written back exactly", FAILURE, ERROR,
        "The migrated notebook cannot be written back exactly in its own JSON layout; it is left as it was.",
        messages={
            "not_exact": Message("{reason}"),
        }),
    "GRL907": Code(
        "file over the size limit (64 MiB), skipped unread", FAILURE, ERROR,
        "The file is larger than 64 MiB (a sparse or generated file beside the code): it is skipped unread,"
        " and the rest of the tree is processed. Split it if it is code to migrate.",
        messages={
            "too_large": Message(
                "skipped: {error}, over the {limit} MiB a file may have; if it is code to migrate, split it"),
            "port": _PORT,
        }),
}
CODES = {code: entry.title for code, entry in TABLE.items()}  # code -> title (what docs and --explain show)
