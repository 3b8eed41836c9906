"""A long module is analysed as its slice (tf_grl_migrate.migrator.slicing): the functions and classes
that cannot bear on an override are set aside and put back. The slice must be invisible: every
case, padded with functions between its statements (plain ones, and ones that use, rebind or
repeat the case's own names and strings), migrates to the same bytes with the same diagnostics
whether it is sliced or analysed whole, in both strategies."""

import ast
import pathlib

import pytest

from tf_grl_migrate.migrator import codemod, slicing

CASES = pathlib.Path(__file__).parent / "cases"
SOURCES = sorted([*(CASES / "rewrite").glob("*/before.py"), *(CASES / "refuse").glob("*/before.py"),
                  *(CASES / "noop").glob("*.py")])

PLAIN = '''

def _pad_{n}(v, width={n}):
    """Padding {n}."""
    out = tf.reduce_sum(v * width)
    return [out + k for k in range(2)]

'''


def _hazards(tree: ast.Module, n: int) -> str:
    """Functions that touch the case's module-level names and strings: each must keep the slice
    from setting it aside, or be harmless to set aside."""
    names = sorted({t.id for s in tree.body for t in ast.walk(s) if isinstance(t, ast.Name)
                    and isinstance(t.ctx, ast.Store)} | {s.name for s in tree.body if hasattr(s, "name")})
    strings = sorted({c.value for c in ast.walk(tree) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                      and c.value.isidentifier()})
    out = []
    for i, name in enumerate(names):
        if n % 3 == 0:
            out.append(f"\n\ndef _reads_{n}_{i}():\n    return {name}\n")
        elif n % 3 == 1:
            out.append(f"\n\nclass _Holder_{n}_{i}:\n    def set(self, v):\n        self.{name} = v\n")
        else:
            out.append(f"\n\ndef {name}_{n}():\n    return {name!r}\n")
    for i, value in enumerate(strings[:3]):
        out.append(f"\n\ndef _mentions_{n}_{i}():\n    return {value!r}\n")
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    imported = sorted({(a.asname or a.name).split(".")[0] for s in imports for a in s.names if a.name != "*"})
    for i, name in enumerate(imported):  # what a module-wide rule reads: `K.flatten(v)`, a Layer subclass
        if n % 3 == 0:
            out.append(f"\n\ndef _uses_{n}_{i}(v):\n    return {name}.flatten(v)\n")
        elif n % 3 == 1:
            out.append(f"\n\nclass _Sub_{n}_{i}({name}):\n    def build(self, shape):\n"
                       "        self.trainable_weights = []\n")
    return "".join(out) + "\n"


def _padded(source: str, hazards: bool) -> str:
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    cuts = [s.end_lineno for i, s in enumerate(tree.body)
            if i + 1 == len(tree.body) or tree.body[i + 1].lineno > s.end_lineno]
    out, start = [], 0
    for n, cut in enumerate(cuts):
        out.extend(lines[start:cut])
        out.append(_hazards(tree, n) if hazards and n % 2 else PLAIN.format(n=n))
        start = cut
    out.extend(lines[start:])
    return "".join(out)


def _migrate(text, use_runtime, min_lines):
    """Sliced wherever a slice is found (``min_lines`` 0: whatever the share of the defs that
    could go), or analysed whole (a huge ``min_lines``)."""
    saved = slicing.MIN_LINES, slicing.MIN_SHARE
    slicing.MIN_LINES, slicing.MIN_SHARE = min_lines, 0 if min_lines == 0 else saved[1]
    try:
        result = codemod.migrate_code(text, use_runtime=use_runtime)
        return result.code, result.diagnostics
    except codemod.SafetyError as exc:
        return "SafetyError", str(exc)
    finally:
        slicing.MIN_LINES, slicing.MIN_SHARE = saved


@pytest.mark.parametrize("hazards", [False, True], ids=["plain", "hazards"])
@pytest.mark.parametrize("path", SOURCES, ids=[f"{p.parent.parent.name}/{p.parent.name}" if p.name == "before.py"
                                                else f"noop/{p.stem}" for p in SOURCES])
def test_slice_is_invisible(path, hazards):
    text = _padded(path.read_text(encoding="utf-8"), hazards)
    if "import tensorflow as tf" not in text:
        text = "import tensorflow as tf\n" + text
    for use_runtime in (False, True):
        assert _migrate(text, use_runtime, 0) == _migrate(text, use_runtime, 10**9)


def test_long_module_is_analysed_as_a_slice():
    units = "".join(PLAIN.format(n=n) for n in range(300))
    text = ("import tensorflow as tf\n\n\n@tf.RegisterGradient('Rev')\ndef _rev(op, grad):\n    return -grad\n"
            + units + "\ndef flipped(x):\n    g = tf.get_default_graph()\n"
            "    with g.gradient_override_map({'Identity': 'Rev'}):\n        return tf.identity(x)\n" + units
            + "\ndef late(x):\n    y = _pad_3(x)\n    g = tf.get_default_graph()\n"
            "    with g.gradient_override_map({'Sign': 'Rev'}):\n        return tf.sign(y)\n")
    part = slicing.slice_module(text, ast.parse(text))
    # _pad_3 (defined twice) is kept: late() calls it; the runs around both copies are set aside
    assert part is not None and len(part._stubs) == 4 and part.code.count("\n") < 60
    assert "def _pad_3(" in part.code and "def _pad_4(" not in part.code
    sliced = _migrate(text, False, 0)
    assert sliced == _migrate(text, False, 10**9)
    assert "gradient_override_map" not in sliced[0] and sliced[0].count("def _pad_") == 600


def test_refusal_positions_are_those_of_the_whole_module():
    units = "".join(PLAIN.format(n=n) for n in range(100))
    text = ("import tensorflow as tf\n" + units + "\ndef wrapped(x, g):\n"
            "    with g.gradient_override_map({'Identity': make_name()}):\n        return tf.identity(x)\n")
    code, diagnostics = _migrate(text, False, 0)
    line = text.splitlines().index("    with g.gradient_override_map({'Identity': make_name()}):") + 1
    assert code == text and [(d.line, d.col) for d in diagnostics] == [(line, 5)]


def test_a_stub_that_does_not_come_back_once_fails_the_slice():
    units = "".join(PLAIN.format(n=n) for n in range(3))
    text = "import tensorflow as tf\n" + units + "\nX = 1\n"
    part = slicing.slice_module(text, ast.parse(text)) if slicing.MIN_LINES <= 10 else None
    saved, slicing.MIN_LINES = slicing.MIN_LINES, 0
    try:
        part = slicing.slice_module(text, ast.parse(text))
    finally:
        slicing.MIN_LINES = saved
    assert part is not None and part.expand(part.code) == text
    stub = part._stubs[0][0]
    assert part.expand(part.code.replace(stub + "\n", "")) is None
    assert part.expand(part.code.replace(stub, "    " + stub)) is None
    assert part.expand(part.code + stub + "\n") is None


def test_a_function_far_away_that_changes_a_module_level_map_is_kept():
    units = "".join(PLAIN.format(n=n) for n in range(60))
    text = ("import tensorflow as tf\n\nMAP = {'Identity': 'Rev'}\n\n\n@tf.RegisterGradient('Rev')\n"
            "def _rev(op, grad):\n    return -grad\n\n\ndef flipped(x):\n    g = tf.get_default_graph()\n"
            "    with g.gradient_override_map(MAP):\n        return tf.identity(x)\n" + units
            + "\n\ndef tweak():\n    MAP['Identity'] = 'Other'\n" + units)
    part = slicing.slice_module(text, ast.parse(text))
    assert part is not None and "def tweak():" in part.code
    code, diagnostics = _migrate(text, False, 0)
    assert (code, diagnostics) == _migrate(text, False, 10**9)
    assert code == text and [d.code for d in diagnostics] == ["GRL105"]
    assert "MAP['Identity'] = 'Other'" in diagnostics[0].text


def test_a_map_bound_by_a_global_in_a_function_is_followed_to_its_other_users():
    units = "".join(PLAIN.format(n=n) for n in range(60))
    text = (
        "import tensorflow as tf\n\n\n@tf.RegisterGradient('Rev')\ndef _rev(op, grad):\n    return -grad\n\n\n"
        "def flipped(x):\n    g = tf.get_default_graph()\n    with g.gradient_override_map(MAP):\n"
        "        return tf.identity(x)\n"
        + units
        + "\n\ndef init():\n    global MAP\n    MAP = {'Identity': 'Rev'}\n"
        + units
        + "\n\ndef tweak():\n    MAP['Identity'] = 'Other'\n"
        + units
    )
    part = slicing.slice_module(text, ast.parse(text))
    assert part is not None and "def init():" in part.code and "def tweak():" in part.code
    assert _migrate(text, False, 0) == _migrate(text, False, 10**9)


def test_a_script_is_sliced_around_its_main_and_a_helper_called_in_a_block():
    """`if __name__ == "__main__": main()` names main, and main every function: none of that counts.
    A helper a block calls is kept (its body is read); its other callers are not needed."""
    units = "".join(PLAIN.format(n=n) for n in range(80))
    calls = "".join(f"    _pad_{n}(x)\n" for n in range(80))
    text = ("import tensorflow as tf\n\n\ndef hard(x):\n    return tf.clip_by_value(x, -1.0, 1.0)\n\n\n"
            "def binarize(x):\n    with tf.get_default_graph().gradient_override_map({'Sign': 'Identity'}):\n"
            "        return tf.sign(hard(x))\n" + units + "\n\ndef main(x):\n" + calls + "    return hard(x)\n\n\n"
            "if __name__ == '__main__':\n    main(1.0)\n")
    part = slicing.slice_module(text, ast.parse(text))
    assert part is not None and "def hard(x):" in part.code and "def main(" not in part.code
    assert part.code.count("\n") < 40
    sliced = _migrate(text, False, 0)
    assert sliced == _migrate(text, False, 10**9) and "_sign_straight_through(hard(x))" in sliced[0]


def test_a_module_whose_defs_that_could_go_are_few_is_analysed_whole():
    """Finding the slice walks the whole module; where the defs and classes that could be set
    aside hold under a quarter of its lines, it is not looked for (and the result is the same)."""
    head = "import tensorflow as tf\n\n\ndef f(x):\n    g = tf.get_default_graph()\n"
    body = "".join(f"    y{i} = tf.identity(x) + {i}\n" for i in range(300))
    few = head + body + "    with g.gradient_override_map({'Identity': 'R'}):\n        return tf.identity(x)\n"
    few += PLAIN.format(n=1)
    assert slicing.slice_module(few, ast.parse(few)) is None
    many = few + "".join(PLAIN.format(n=n) for n in range(2, 60))
    assert slicing.slice_module(many, ast.parse(many)) is not None


# a case that migrates, in a module that imports Keras's backend and Layer without reading them
KERAS_MODULE = "import keras.backend as K\nfrom keras.layers import Layer\n" + (
    CASES / "rewrite" / "plain_scale_gradient" / "before.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("use", [
    "class Posterior(Layer):\n    def call(self, x):\n        return K.flatten(x)\n",
    "def posterior(x):\n    return K.flatten(x)\n",
    "def posterior(x):\n    return K.placeholder(shape=x.shape)\n",  # neither Keras 3 nor tf.keras: a note here
    "def posterior(x, K=None):\n    return K.flatten(x)\n",  # not the backend: nothing moves
    "def posterior(x):\n    K = x\n    return K.flatten(x)\n",
    "def posterior(x):\n    return K.mean(x), K.backend()\n",  # Keras 3 has K.backend: only K.mean counts
    "class Scaled(tf.keras.layers.Layer):\n    def build(self, shape):\n        self.trainable_weights = []\n"])
def test_code_a_keras_rule_reads_is_seen_through_the_slice(use):
    """The Keras rules read the whole migrated module: a backend function Keras 3 lacks, called
    anywhere, moves the backend import to tf.keras (code set aside hands such a call on in its stub
    line), one neither has gets a note at its line; every Keras layer's weight lists are respelled.
    Sliced or whole, the module migrates to the same bytes with the same diagnostics."""
    text = KERAS_MODULE + "".join(PLAIN.format(n=n) for n in range(20)) + "\n\n" + use
    for use_runtime in (False, True):
        assert _migrate(text, use_runtime, 0) == _migrate(text, use_runtime, 10**9)


def test_a_keras_backend_call_set_aside_is_handed_on_in_its_stub(monkeypatch):
    """Code that only calls a backend function tf.keras has (``K.flatten``) is set aside, and the
    stub line carries the call; code the rules would note, or that binds ``K``, stays."""
    monkeypatch.setattr(slicing, "MIN_LINES", 0)
    monkeypatch.setattr(slicing, "MIN_SHARE", 0)
    carried = KERAS_MODULE + "".join(PLAIN.format(n=n) for n in range(20)) + (
        "\n\ndef posterior(x):\n    return K.flatten(x)\n")
    part = slicing.slice_module(carried, ast.parse(carried))
    assert part is not None and "def posterior" not in part.code and "K.flatten" in part.code
    for use in ("def posterior(x):\n    return K.placeholder(shape=x.shape)\n",
                "def posterior(x, K=None):\n    return K.flatten(x)\n"):
        kept = KERAS_MODULE + "".join(PLAIN.format(n=n) for n in range(20)) + "\n\n" + use
        part = slicing.slice_module(kept, ast.parse(kept))
        assert part is not None and "def posterior" in part.code


def test_the_slice_keeps_what_the_keras_rules_respell():
    """slicing.py names what idioms/keras_layer.py reads module-wide without importing it (the slice
    is found with ast alone): the two must not drift apart."""
    from tf_grl_migrate.migrator.idioms import keras_layer

    assert all(slicing._SEED.search(name) for name in keras_layer.SETTABLE_ONCE)
    assert all(slicing._BACKEND.search(line) for line in (
        "import keras.backend as K", "from keras import backend as K", "from tensorflow.keras import backend"))
