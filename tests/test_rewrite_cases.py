"""Text-level spec of the migrator: before/after byte for byte, no-ops, refusals."""

import ast
import pathlib

import pytest

from tf_grl_migrate.migrator.codemod import migrate_code

CASES = pathlib.Path(__file__).parent / "cases"
REWRITES = sorted(p for p in (CASES / "rewrite").iterdir() if p.is_dir())
NOOPS = sorted((CASES / "noop").glob("*.py"))
REFUSALS = sorted(p for p in (CASES / "refuse").iterdir() if p.is_dir())


def _read(path):
    return path.read_bytes().decode("utf-8")


def _notes(case):
    """A rewrite case's expected notes (GRL2xx: the file is migrated), from notes.txt if any."""
    path = case / "notes.txt"
    return path.read_text().split("\n")[:-1] if path.exists() else []


@pytest.mark.parametrize("case", REWRITES, ids=[p.name for p in REWRITES])
def test_rewrite_matches_expected_bytes(case):
    result = migrate_code(_read(case / "before.py"))
    assert [f"{d.line}:{d.col}: {d.code}" for d in result.diagnostics] == _notes(case)
    assert all(d.code.startswith("GRL2") for d in result.diagnostics)
    assert result.code == _read(case / "after.py")
    assert "gradient_override_map" not in result.code and "RegisterGradient" not in result.code


@pytest.mark.parametrize("case", REWRITES, ids=[p.name for p in REWRITES])
def test_second_run_changes_nothing(case):
    after = _read(case / "after.py")
    assert migrate_code(after).code == after


@pytest.mark.parametrize("case", REWRITES, ids=[p.name for p in REWRITES])
def test_use_runtime_rewrite_matches_expected_bytes(case):
    """--use-runtime: after_runtime.py where the shim applies, else the inline after.py exactly."""
    expected = case / "after_runtime.py"
    result = migrate_code(_read(case / "before.py"), use_runtime=True)
    assert [f"{d.line}:{d.col}: {d.code}" for d in result.diagnostics] == _notes(case)
    assert result.code == _read(expected if expected.exists() else case / "after.py")
    assert migrate_code(result.code, use_runtime=True).code == result.code


@pytest.mark.parametrize("path", NOOPS, ids=[p.stem for p in NOOPS])
def test_must_not_change(path):
    source = _read(path)
    result = migrate_code(source)
    assert result.code == source
    assert result.diagnostics == []


@pytest.mark.parametrize("case", REFUSALS, ids=[p.name for p in REFUSALS])
def test_refused_site_is_left_unchanged_with_a_coded_diagnostic(case):
    source = _read(case / "before.py")
    result = migrate_code(source)
    assert result.code == source
    got = [f"{d.line}:{d.col}: {d.code}" for d in result.diagnostics]
    assert got == (case / "expected.txt").read_text().split("\n")[:-1]
    assert all(len(d.message) > 40 for d in result.diagnostics)  # says what to do by hand


@pytest.mark.parametrize("case", REFUSALS, ids=[p.name for p in REFUSALS])
def test_use_runtime_moves_model_wide_blocks_onto_the_runtime_map_or_refuses_alike(case):
    """--use-runtime: a refused case with after_runtime.py is migrated onto
    tf_grl_migrate.gradient_override_map (or, the py_func recipe, tf_grl_migrate.py_func) byte for
    byte (notes only), and a second run changes nothing; any other is refused as without it."""
    source = _read(case / "before.py")
    result = migrate_code(source, use_runtime=True)
    expected = case / "after_runtime.py"
    if not expected.exists():
        assert result.code == source
        assert [f"{d.line}:{d.col}: {d.code}" for d in result.diagnostics] == (
            case / "expected.txt").read_text().split("\n")[:-1]
        return
    assert result.code == _read(expected)
    assert "tf_grl_migrate.gradient_override_map(" in result.code or "tf_grl_migrate.py_func(" in result.code
    again = migrate_code(result.code, use_runtime=True)
    assert again.code == result.code
    assert [d.code for d in again.diagnostics if not d.code.startswith("GRL2")] == [
        d.code for d in result.diagnostics if not d.code.startswith("GRL2")]


@pytest.mark.parametrize(
    "path", [*(c / "before.py" for c in REFUSALS), *NOOPS], ids=lambda p: p.parent.name + "/" + p.name
)
def test_cheap_screen_agrees_with_the_full_analysis(path):
    """The ast screen that spares libcst only answers where the full analysis gives the same result."""
    from tf_grl_migrate.migrator.codemod import _transform

    source = _read(path)
    assert _transform(source) == _transform(source, screen=False)


_BLOCK = 'with g.gradient_override_map({"Identity": "Id"}):\n    y = tf.identity(x)\n'
_HEAD = 'import tensorflow as tf\ng = tf.get_default_graph()\n\n'
SCREEN_SHAPES = {
    "docstring-only": _HEAD + '"""Example:\n\n    ' + _BLOCK.replace("\n", "\n    ") + '"""\n',
    "comment-only": _HEAD + "# " + _BLOCK.replace("\n", "\n# ") + "\n",
    "dead-if-0": _HEAD + "if 0:\n    " + _BLOCK.replace("\n", "\n    ").rstrip() + "\n",
    "after-return": _HEAD + "def f(x):\n    return x\n    " + _BLOCK.replace("\n", "\n    ").rstrip() + "\n",
    "lambda-default": _HEAD + "h = lambda m=g.gradient_override_map({'Identity': 'Id'}): m\n",
    "f-string": _HEAD + "s = f\"{g.gradient_override_map({'Foo': 'Id'})}\"\n",
    "module-level-return": _HEAD + "return\n" + _BLOCK,  # compiles for ast, not for the compiler
    "unknown-op": _HEAD + _BLOCK.replace('"Identity"', '"IdentityN"'),
    # the map reached by its name as a string, or a wrapper handed in under the map's name: no global names it
    "getattr-string": _HEAD + _BLOCK.replace("g.gradient_override_map", 'getattr(g, "gradient_override_map")'),
    "parameter-named-like-it": _HEAD + "def f(x, gradient_override_map):\n    " + _BLOCK.replace(
        "g.gradient_override_map", "gradient_override_map").replace("\n", "\n    ").rstrip() + "\n",
}


@pytest.mark.parametrize("source", [*SCREEN_SHAPES.values(), *(
    _read(p) for p in sorted(CASES.glob("*/*/before.py")))])
def test_the_screens_first_look_at_the_lines_naming_the_map_answers_as_the_whole_walk(source):
    """precheck: the nodes on lines that name the map (and those holding them: a decorated def
    by its decorators' lines) are walked first; where one reaches it, that is the whole walk's
    answer (a docstring, a comment or an unread string on such a line falls through to the whole
    walk). Pruned by every line, the walk is the whole walk."""
    from tf_grl_migrate.migrator import precheck

    tree = ast.parse(source)
    assert precheck._reaches_on(tree, set(range(1, source.count("\n") + 2))) == precheck._reaches(tree)
    shuffled = "# gradient_override_map\n" + source  # a line naming it before the first statement
    assert precheck._nothing_reaches_the_map(tree, source) == (not precheck._reaches(tree))
    assert precheck._nothing_reaches_the_map(ast.parse(shuffled), shuffled) == (not precheck._reaches(tree))


@pytest.mark.parametrize("compile_first", [0, None], ids=["bytecode screen first", "as sized"])
@pytest.mark.parametrize("source", SCREEN_SHAPES.values(), ids=SCREEN_SHAPES.keys())
def test_cheap_screen_agrees_with_the_full_analysis_on_edge_shapes(source, compile_first, monkeypatch):
    from tf_grl_migrate.migrator import precheck
    from tf_grl_migrate.migrator.codemod import _transform

    if compile_first is not None:  # these modules are small: the bytecode screen would not go first
        monkeypatch.setattr(precheck, "COMPILE_FIRST", compile_first)
    assert _transform(source) == _transform(source, screen=False)


def test_bytecode_screen_answers_only_for_mentions_outside_code():
    from tf_grl_migrate.migrator import precheck

    # an interpreter that drops dead code's names (CPython 3.9) never answers: the screen then
    # leaves every candidate to the analysis, which is the safe side
    keeps = precheck._compiler_keeps_dead_names()
    assert precheck._names_nowhere(SCREEN_SHAPES["docstring-only"]) == keeps
    assert precheck._names_nowhere(SCREEN_SHAPES["comment-only"]) == keeps
    for name in ("dead-if-0", "after-return", "lambda-default", "f-string", "unknown-op", "getattr-string",
                 "parameter-named-like-it"):
        assert not precheck._names_nowhere(SCREEN_SHAPES[name]), name
    assert not precheck._names_nowhere(SCREEN_SHAPES["module-level-return"])  # does not compile: ast decides


def test_model_wide_refusal_names_the_runtime_recipe_with_the_blocks_own_map():
    source = _read(CASES / "refuse" / "model_wide_guided_relu" / "before.py")
    (diagnostic,) = migrate_code(source).diagnostics
    assert diagnostic.code == "GRL101"
    assert 'tf_grl_migrate.gradient_override_map({"Relu": "GuidedRelu"})' in diagnostic.text
    assert "`build_model`" in diagnostic.message
    assert "--use-runtime migrates it" in diagnostic.hints
    assert "--use-runtime" not in migrate_code(source, use_runtime=True).code


def test_a_refusal_says_use_runtime_only_where_it_would_migrate():
    """The hint names --use-runtime where that strategy takes the block, not elsewhere (a receiver
    that is no graph), and never under --use-runtime itself."""
    taken = _read(CASES / "refuse" / "map_chosen_at_run_time" / "before.py")
    assert "--use-runtime" in migrate_code(taken).diagnostics[0].sentence
    for case in ("receiver_not_provably_a_graph", "registration_after_its_use_in_one_scope"):
        for d in migrate_code(_read(CASES / "refuse" / case / "before.py")).diagnostics:
            assert "--use-runtime" not in d.text, case
    (d,) = migrate_code(_read(CASES / "refuse" / "gradient_reads_node_def" / "before.py"), use_runtime=True).diagnostics
    assert "--use-runtime does not take it" in d.hints
    assert "--use-runtime does not take it: gradient function `_named_flip` reads `op.node_def`" in d.text


def test_a_target_naming_a_tensorflow_op_type_says_it_is_tensorflows_own_gradient():
    """`{"Relu": "Relu6"}` borrows TensorFlow's own Relu6 gradient, whose math the tool does not
    know: refused (GRL102) as that, not as a registration nowhere to be found."""
    source = ("import tensorflow as tf\n\n\ndef capped(x):\n"
              "    with tf.get_default_graph().gradient_override_map({'Relu': 'Relu6'}):\n"
              "        return tf.nn.relu(x * 4.0)\n")
    (d,) = migrate_code(source).diagnostics
    assert d.code == "GRL102" and "names TensorFlow's own gradient for 'Relu6' ops" in d.message
    assert migrate_code(source).code == source


def test_use_runtime_leaves_identity_maps_around_unseen_code_refused():
    """TF1 made Identity ops of its own (a ref variable's read, `w/read`) where TF2 makes none: an
    Identity map around code the tool cannot see is not moved onto the runtime map, and says why."""
    (d,) = migrate_code(_read(CASES / "refuse" / "opaque_call_in_block" / "before.py"), use_runtime=True).diagnostics
    assert d.code == "GRL101" and "`w/read`" in d.text and "--use-runtime does not take it" in d.hints
    # without --use-runtime, the refusal's recipe (the same map through the runtime, by hand) says so too
    (d,) = migrate_code(_read(CASES / "refuse" / "opaque_call_in_block" / "before.py")).diagnostics
    assert "with tf_grl_migrate.gradient_override_map(" in d.text and "--use-runtime does not take it" in d.hints
    assert "that map would not give TF1's gradients either, through --use-runtime or by hand" in d.text
    # refused first for another reason (a target held in a parameter): the block is looked at all the same
    chosen = ("import tensorflow as tf\n\n\ndef encode_reversed(x, encoder, gradient):\n"
              "    with tf.get_default_graph().gradient_override_map({'Identity': gradient}):\n"
              "        return encoder(x)\n")
    result = migrate_code(chosen, use_runtime=True)
    assert result.code == chosen and "`w/read`" in result.diagnostics[0].text


def test_model_wide_refusal_names_the_call_that_builds_the_model_not_a_builtin():
    """A Grad-CAM block that asks hasattr/dir before building VGG16: GRL101 names VGG16."""
    source = (
        "import tensorflow as tf\n"
        "from keras.applications import VGG16\n\n\n"
        "@tf.RegisterGradient('GuidedReluB')\n"
        "def _guided(op, grad):\n"
        "    return tf.where(grad > 0.0, grad, tf.zeros_like(grad))\n\n\n"
        "def guided_model(opts):\n"
        "    g = tf.get_default_graph()\n"
        "    with g.gradient_override_map({'Relu': 'GuidedReluB'}):\n"
        "        if hasattr(opts, 'weights') and 'imagenet' in dir(opts):\n"
        "            return VGG16(weights=opts.weights)\n"
        "        return VGG16()\n"
    )
    (diagnostic,) = migrate_code(source).diagnostics
    assert diagnostic.code == "GRL101" and "calls `VGG16`" in diagnostic.message


def test_hidden_op_wrappers_get_their_tf2_name_in_moved_gradient_code():
    """gen_nn_ops._relu_grad (TF up to 1.4) is gen_nn_ops.relu_grad in TF2: the inline rewrite
    moves the gradient with that name instead of refusing it (GRL114)."""
    source = (
        "import tensorflow as tf\n"
        "from tensorflow.python.ops import gen_nn_ops\n\n\n"
        "@tf.RegisterGradient('GuidedReluW')\n"
        "def _guided(op, grad):\n"
        "    return tf.where(0. < grad, gen_nn_ops._relu_grad(grad, op.outputs[0]), tf.zeros_like(grad))\n\n\n"
        "def guided(x):\n"
        "    with tf.get_default_graph().gradient_override_map({'Relu': 'GuidedReluW'}):\n"
        "        return tf.nn.relu(x)\n"
    )
    result = migrate_code(source)
    assert result.diagnostics == [] and "gen_nn_ops.relu_grad(" in result.code and "_relu_grad" not in result.code


def test_a_map_key_that_is_no_op_type_is_noted_and_named():
    """GRL203: `{"floor": ...}` overrode nothing in TF1 (op types are CamelCase); the note says which
    op type was probably meant."""
    result = migrate_code(_read(CASES / "rewrite" / "map_key_that_is_no_op_type" / "before.py"))
    floor, clip = result.diagnostics
    assert (floor.code, clip.code) == ("GRL203", "GRL203")
    assert "'Floor' ops was meant" in floor.message and "another gradient was meant" in clip.message


def test_a_helpers_own_override_block_that_makes_the_callers_op_type_refuses_the_caller():
    """A helper's own override block is entered without making an op, so a caller's block may
    wrap what it makes itself, but only when the helper makes no op of the caller's types: here
    the helper's block gives its Sign op its own gradient in TF1, so the caller is refused (and
    the helper's block, proven on its own, is migrated)."""
    source = ("import tensorflow as tf\n\n\n@tf.RegisterGradient(\"SignClipped\")\ndef _sign_clipped(op, grad):\n"
              "    return tf.clip_by_value(grad, -1.0, 1.0)\n\n\ndef binarize(x):\n"
              "    with tf.get_default_graph().gradient_override_map({\"Sign\": \"SignClipped\"}):\n"
              "        return tf.sign(x)\n\n\ndef binary_layer(x):\n"
              "    with tf.get_default_graph().gradient_override_map({\"Sign\": \"Identity\"}):\n"
              "        return tf.sign(binarize(x) + 0.5)\n")
    result = migrate_code(source)
    assert [(d.line, d.code) for d in result.diagnostics] == [(15, "GRL101")]
    assert "`binarize`, which may create 'Sign' ops" in result.diagnostics[0].message
    assert "return _sign_clipped(x)" in result.code
    assert result.code.count("gradient_override_map") == 1


def test_a_second_pass_keeps_the_inputs_lines_for_what_stays_refused():
    """A block refused because of a helper's own override block, which that pass dissolves, is
    migrated by a second pass (here the helper's graph comes from a call the tool cannot see
    into, K.get_session(), gone with the dissolved block); a refusal further down still points at
    its line in the input."""
    source = _read(CASES / "rewrite" / "helper_whose_override_block_does_nothing" / "before.py").replace(
        "import tensorflow as tf\n", "import tensorflow as tf\nfrom keras import backend as K\n"
    ).replace(
        'tf.get_default_graph().gradient_override_map({"Floor"', 'K.get_session().graph.gradient_override_map({"Floor"'
    ) + (
        '\n\ndef unknown(x):\n    with tf.get_default_graph().gradient_override_map({"LRN": "Identity"}):\n'
        "        return tf.nn.lrn(x)\n"
    )
    result = migrate_code(source)
    line = source.splitlines().index('    with tf.get_default_graph().gradient_override_map({"LRN": "Identity"}):')
    floor = source.splitlines().index('    with K.get_session().graph.gradient_override_map({"Floor": "Identity"}):')
    assert [(d.line, d.col, d.code) for d in result.diagnostics] == [(floor + 1, 5, "GRL207"), (line + 1, 5, "GRL104")]
    assert "_sign_straight_through" in result.code and "LRN" in result.code
    assert migrate_code(result.code).code == result.code


def _r2rt_style(extra: str) -> str:
    return ("import tensorflow as tf\n\n\n@tf.RegisterGradient(\"FirstOnly\")\ndef _first(op, grad):\n"
            "    return [grad, tf.zeros(tf.shape(op.inputs[1]))]\n\n\ndef sample(x):\n"
            "    with tf.get_default_graph().gradient_override_map({\"Ceil\": \"Identity\", \"Sub\": \"FirstOnly\"}):\n"
            f"        return tf.ceil(x - tf.random_uniform(tf.shape(x){extra}))\n")


def test_a_random_draw_known_by_its_shape_only_is_proven_with_its_shape_only():
    """tf.random_uniform is in the table as called with its shape (RandomUniform, one Tensor), so
    `x - tf.random_uniform(tf.shape(x))` is a Sub op the registration wraps; with `maxval=` it may
    make Mul and Add ops too, which the table does not show: refused."""
    plain = migrate_code(_r2rt_style(""))
    # the migrated function runs under TF2 now: its TF1-only name spelled as TF2 has it, the very object
    assert plain.diagnostics == [] and "_first(x, tf.compat.v1.random_uniform(tf.shape(x)))" in plain.code
    assert "tf.compat.v1.ceil(x)" in plain.code  # TF1's tf.ceil, spelled as TF2 has it
    wider = migrate_code(_r2rt_style(", maxval=2.0"))
    assert [d.code for d in wider.diagnostics] == ["GRL101"] and wider.code == _r2rt_style(", maxval=2.0")


def test_a_cast_map_does_not_trust_a_float_trace():
    """tf.to_float makes no op on float inputs, a Cast on int ones: a {"Cast": ...} block calling it
    is not proven by the trace."""
    source = ("import tensorflow as tf\n\n\ndef f(x, k):\n    with tf.get_default_graph().gradient_override_map("
              "{\"Cast\": \"Identity\"}):\n        return tf.to_float(k) * tf.to_int32(x)\n")
    assert [d.code for d in migrate_code(source).diagnostics] == ["GRL101"]


def test_grl102_offers_the_private_helper_hint_only_where_it_would_be_enough():
    """A target held in a public helper's parameter: making the helper private migrates a block the
    tool can see through, not one that builds a model (it would be GRL101 next): there the
    message names the model-building call instead, and --use-runtime."""
    head = ("import tensorflow as tf\nfrom keras.applications import VGG16\n\n\n"
            "@tf.RegisterGradient('GuidedBackPropH')\ndef _guided(op, grad):\n"
            "    return grad * tf.cast(grad > 0., grad.dtype) * tf.cast(op.inputs[0] > 0., grad.dtype)\n\n\n")
    model_wide = head + ("def modify_backprop(model, name):\n    g = tf.get_default_graph()\n"
                         "    with g.gradient_override_map({'Relu': name}):\n"
                         "        layers = [layer for layer in model.layers if hasattr(layer, 'activation')]\n"
                         "        new_model = VGG16(weights='imagenet')\n    return new_model\n")
    local = head + ("def guided(x, name):\n    g = tf.get_default_graph()\n"
                    "    with g.gradient_override_map({'Relu': name}):\n        return tf.nn.relu(x)\n")
    (d,) = [d for d in migrate_code(model_wide).diagnostics if d.code == "GRL102"]
    assert "module-private" not in d.text and "`VGG16`" in d.text
    assert "--use-runtime migrates it" in d.hints
    (d,) = [d for d in migrate_code(local).diagnostics if d.code == "GRL102"]
    assert "a module-private `_guided` called only with literals here would be migrated" in d.text


def test_a_name_tf2_has_in_no_form_around_a_migrated_site_gets_a_note():
    """GRL204: the migrated function still runs `tf.contrib...`, which no TF2 has: the site is
    migrated, and the line is named for a hand."""
    source = (CASES / "rewrite" / "tf1_only_names_around_the_site" / "before.py").read_text().replace(
        "h = tf.tanh(x)", "h = tf.contrib.layers.flatten(x)")
    result = migrate_code(source)
    assert "gradient_override_map" not in result.code and "tf.compat.v1.variable_scope" in result.code
    (note,) = result.diagnostics
    assert (note.code, note.line) == ("GRL204", 13) and "tf.contrib.layers.flatten" in note.message


def test_a_map_whose_block_makes_none_of_its_op_types_vanishes_with_a_note_saying_why():
    """GRL207: `{"Round": "Identity"}` around `tf.equal`: TF1 applied it to nothing, the numbers do
    not change, and the user is told why the map is gone."""
    source = ("import tensorflow as tf\n\n\ndef same(x, y):\n"
              "    with tf.get_default_graph().gradient_override_map({\"Round\": \"Identity\"}):\n"
              "        return tf.equal(x, y)\n")
    result = migrate_code(source)
    assert result.code == "import tensorflow as tf\n\n\ndef same(x, y):\n    return tf.equal(x, y)\n"
    [note] = result.diagnostics
    assert (note.line, note.code) == (5, "GRL207") and "no Round op" in note.message


def test_every_diagnostic_that_says_use_runtime_migrates_it_is_migrated_by_it():
    """A hint that keeps its promise (issue #39): over every case and idiom example, each site
    whose one-line message says `--use-runtime migrates it` is no longer refused under it."""
    from tf_grl_migrate.migrator.idioms import all_idioms

    sources = [_read(p) for p in sorted(CASES.glob("*/*/before.py"))]
    sources += [example for idiom in all_idioms() for example in idiom.examples.values()]
    promised = 0
    for source in sources:
        sites = [(d.line, d.col) for d in migrate_code(source).diagnostics if "--use-runtime migrates it" in d.hints]
        if not sites:
            continue
        refused = {(d.line, d.col) for d in migrate_code(source, use_runtime=True).diagnostics if d.is_refusal}
        promised += len(sites)
        assert not set(sites) & refused, source[:200]
    assert promised >= 20


def test_the_next_pass_screens_the_safety_nets_tree_of_the_rewritten_code(monkeypatch):
    """The stability pass takes the ast the safety net parsed from the rewritten code: it is
    not parsed again, and the outcome is the one a fresh parse gives."""
    from tf_grl_migrate.migrator import codemod, precheck

    source = (CASES / "rewrite" / "dann_builder_class" / "before.py").read_text(encoding="utf-8")
    parsed = []
    parse = precheck.parse
    monkeypatch.setattr(precheck, "parse", lambda code: parsed.append(code) or parse(code))
    result = codemod.migrate_code(source)
    assert result.code != source and result.tree is None  # the tree is not kept with the result
    assert parsed == [source]
    monkeypatch.undo()
    fresh = codemod._again(result.code, False, None, None)
    assert fresh == codemod._again(result.code, False, None, ast.parse(result.code))


@pytest.mark.parametrize("source", [*SCREEN_SHAPES.values(), "global a, b\nz = a < b <= c\n",
                                    *(_read(p) for p in sorted(CASES.glob("*/*/before.py"))[::3])])
def test_the_packages_ast_walk_is_asts_own(source):
    """precheck.walk meets the nodes ast.walk meets, in its order (names in lists are no nodes)."""
    from tf_grl_migrate.migrator import precheck

    tree = ast.parse(source)
    assert list(map(id, precheck.walk(tree))) == list(map(id, ast.walk(tree)))
