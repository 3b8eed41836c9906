"""The verifier's reading of which module-level statements may run before the code under test is
called (verifier/script.py): plain Python, no TensorFlow, no worker."""

import ast

import pytest

from tf_grl_migrate.verifier.script import Harmless


@pytest.mark.parametrize("line", [
    'tf.RegisterGradient("Rev")',  # the decorator's call alone: it registers nothing yet
    'tf.RegisterGradient("Rev")(_reverse)',
    'ops.RegisterGradient(NAME)(_reverse)',
])
def test_a_registration_statement_runs_only_its_name(line):
    tree = ast.parse(f"import tensorflow as tf\nfrom tensorflow.python.framework import ops\nNAME = 'Rev'\n{line}\n")
    assert Harmless(tree).statement(tree.body[-1]) is None


def test_a_registration_whose_name_is_a_call_is_script_code():
    tree = ast.parse("import tensorflow as tf\ntf.RegisterGradient(make_name())(_reverse)\n")
    assert Harmless(tree).statement(tree.body[-1]) is not None
