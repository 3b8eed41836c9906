"""TF1's other gradient override, ``function.Defun(..., python_grad_func=...)`` / ``grad_func=``
(idioms/defun.py): what the migration says and keeps beside the cases (tests/cases/rewrite/defun_*,
proven against TF1's own Defun by tests/test_differential.py, and by --verify in test_verify.py)."""

import textwrap

from tf_grl_migrate.migrator.codemod import migrate_code

HEAD = "import tensorflow as tf\nfrom tensorflow.python.framework import function\n\n\n"


def _codes(result):
    return [d.code for d in result.diagnostics]


def test_a_defun_without_a_gradient_is_kept_with_a_note_saying_tf2_runs_it_only_in_a_graph():
    source = HEAD + "@function.Defun(tf.float32)\ndef double(x):\n    return x * 2.0\n"
    result = migrate_code(source)
    assert result.code == source
    assert _codes(result) == ["GRL205"]
    assert "@tf.function" in result.diagnostics[0].message


def test_a_defun_without_a_gradient_is_no_override_whatever_its_form():
    """No python_grad_func=, no grad_func=, no `**` that could hold one: not an override, so the
    forms the tool refuses for a Defun with a gradient (rebinding its own name, built in a loop,
    keywords the tool does not know, parameters a Defun never passes) are noted, not refused."""
    source = HEAD + textwrap.dedent('''\
        def loop(cond, body, loop_in, dtypes):
            cond = function.Defun(*dtypes)(cond)
            body = function.Defun(*dtypes)(body)
            return cond, body


        def per_layer(layers):
            for layer in layers:
                layer.fn = function.Defun(tf.float32)(layer.fn)


        @function.Defun(capture_by_value=True)
        def make_dataset():
            return tf.constant(1.0)


        @function.Defun(tf.float32)
        def scaled(x, *, scale=2.0):
            return x * scale


        def read(**options):
            return function.Defun(tf.float32, **options)(tf.identity)
        ''')
    result = migrate_code(source)
    assert result.code == source
    said = [(d.code, d.message.split(" is a Defun")[0]) for d in result.diagnostics]
    assert said[:5] == [("GRL205", "note: `cond`"), ("GRL205", "note: `body`"), ("GRL205", "note: `layer.fn`"),
                        ("GRL205", "note: `make_dataset`"), ("GRL205", "note: `scaled`")], said
    assert said[5][0] == "GRL115" and len(said) == 6  # `**options` may hold a python_grad_func


def test_a_migrated_defun_says_what_it_dropped_and_why():
    source = HEAD + textwrap.dedent('''\
        @function.Defun(tf.float32, python_grad_func=lambda op, dy: -dy, func_name="Flip", noinline=True,
                        shape_func=lambda op: [op.inputs[0].get_shape()])
        def flip(x):
            return tf.identity(x)
        ''')
    result = migrate_code(source)
    assert _codes(result) == ["GRL206"]
    message = result.diagnostics[0].text
    assert all(word in message for word in ("declared input types", "func_name=", "noinline=", "shape_func="))
    assert "@tf.custom_gradient\ndef flip(x):" in result.code and "Defun" not in result.code
    again = migrate_code(result.code)
    assert again.code == result.code and again.diagnostics == []


def test_grad_func_defun_loses_its_decorator_and_is_called_with_inputs_then_gradients():
    source = HEAD + textwrap.dedent('''\
        @function.Defun(tf.float32, tf.float32)
        def twice_grad(x, dy):
            return [2.0 * dy]


        @function.Defun(tf.float32, grad_func=twice_grad)
        def same(x):
            return x
        ''')
    result = migrate_code(source)
    assert "def twice_grad(x, dy):" in result.code and "@function.Defun" not in result.code
    assert "return twice_grad(x, *dys)" in result.code
    assert _codes(result) == ["GRL206"]  # one note: the grad_func's Defun is part of the other


def test_a_file_that_uses_defun_is_never_silent():
    """A Defun the tool cannot follow is refused by name, not passed over."""
    source = HEAD + textwrap.dedent('''\
        make = function.Defun
        handlers = [function.Defun(tf.float32, python_grad_func=lambda op, dy: dy)(tf.identity)]
        ''')
    result = migrate_code(source)
    assert result.code == source
    assert _codes(result) == ["GRL115", "GRL115"]
    assert "taken as a value" in result.diagnostics[0].message
    assert "other than as a decorator" in result.diagnostics[1].message


def test_a_defun_decorating_a_class_is_refused_not_an_internal_error():
    source = HEAD + textwrap.dedent('''\
        def _grad(op, grad):
            return -grad


        @function.Defun(tf.float32, python_grad_func=_grad)
        class Flip:
            pass
        ''')
    result = migrate_code(source)
    assert result.code == source
    assert _codes(result) == ["GRL115"]
    assert "decorates a class" in result.diagnostics[0].message


def test_the_names_the_generated_function_uses_never_hide_its_parameters():
    source = HEAD + textwrap.dedent('''\
        def _g(op, dy):
            return dy * op.inputs[1]


        @function.Defun(tf.float32, tf.float32, python_grad_func=_g)
        def f(outputs, grad):
            return outputs * grad
        ''')
    result = migrate_code(source)
    assert "def f(outputs, grad):\n    outputs_ = _f_forward(outputs, grad)" in result.code
    assert "inputs=[outputs, grad]" in result.code


def test_a_gradient_imported_from_a_module_outside_the_run_is_refused_saying_so():
    source = HEAD.replace("\n\n\n", "\nfrom .grads import reverse_grad\nimport grads2\n\n\n") + textwrap.dedent('''\
        @function.Defun(tf.float32, python_grad_func=reverse_grad)
        def flip(x):
            return tf.identity(x)


        @function.Defun(tf.float32, python_grad_func=grads2.reverse_grad)
        def flip2(x):
            return tf.identity(x)
        ''')
    result = migrate_code(source)
    assert result.code == source and _codes(result) == ["GRL115", "GRL115"]
    assert all("comes from a module outside this run: run the tool on that module too" in d.message
               for d in result.diagnostics)


GRADS = """\
import tensorflow as tf


def reverse_grad(op, dy):
    return -dy * tf.ones_like(op.inputs[0])


def attr_grad(op, dy):
    return dy * op.get_attr("T")


@tf.function
def decorated_grad(op, dy):
    return -dy


def rebinds_op(op, dy):
    op = None
    return -dy


def keyword_only(op, *, dy):
    return -dy


reverse_twice = reverse_grad
reverse_twice = attr_grad
"""

MODEL = """\
import tensorflow as tf
from tensorflow.python.framework import function

import grads
from grads import reverse_grad


@function.Defun(tf.float32, python_grad_func=reverse_grad)
def flip(x):
    return tf.identity(x)


@function.Defun(tf.float32, python_grad_func=grads.{other})
def other(x):
    return tf.identity(x)
"""


def test_a_gradient_another_module_of_the_run_defines_is_read_there(tmp_path):
    """Migrated where that module's def reads of its op only op.inputs / op.outputs; refused with
    what it does else (cli: the run's facts link the two modules)."""
    from harness import cli

    (tmp_path / "grads.py").write_text(GRADS)
    why = {"attr_grad": "line 9 uses `op` other than as op.inputs and op.outputs",
           "decorated_grad": "it is decorated or asynchronous",
           "rebinds_op": "line 18 uses `op` other than as op.inputs and op.outputs",
           "keyword_only": "it does not take (op, *grads)",
           "reverse_twice": "`reverse_twice` is bound more than once in grads.py",
           "missing": "`missing` is no function defined in grads.py"}
    for other, reason in why.items():
        (tmp_path / "model.py").write_text(MODEL.format(other=other))
        result = cli(tmp_path, "--write", "-j", "1", "--no-cache")
        model = (tmp_path / "model.py").read_text()
        assert "@tf.custom_gradient\ndef flip(x):" in model and "return reverse_grad(op, *dys)" in model
        assert f"python_grad_func=grads.{other})" in model, other
        assert f"GRL115 the gradient `grads.{other}` (grads.py): {reason}: write" in result.output, result.output
    (tmp_path / "model.py").write_text(MODEL.format(other="reverse_grad"))
    result = cli(tmp_path, "--write", "-j", "1", "--no-cache")
    assert result.exit_code == 0 and "Defun" not in (tmp_path / "model.py").read_text(), result.output


def test_a_cached_result_never_outlives_the_gradient_module_it_read(tmp_path, monkeypatch):
    """The Defun module's result depends on the other module's def: changing that def changes the
    answer on the next cached run."""
    from harness import cli

    monkeypatch.setenv("TF_GRL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "grads.py").write_text(GRADS)
    (tree / "model.py").write_text(MODEL.format(other="reverse_grad"))
    first = cli(tree, "-j", "1")
    assert "GRL115" not in first.output and "2 sites" not in first.output
    (tree / "grads.py").write_text(GRADS.replace("return -dy * tf.ones_like(op.inputs[0])",
                                                 "return -dy * op.get_attr('T')"))
    second = cli(tree, "-j", "1")
    assert second.output.count("GRL115") == 2, second.output
