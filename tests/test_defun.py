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


def test_a_gradient_imported_from_another_module_is_refused_saying_so():
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
    assert all("comes from another module" in d.message for d in result.diagnostics)
