"""The verifier's reading of which module-level statements may run before the code under test is
called (verifier/script.py): plain Python, no TensorFlow, no worker."""

import ast
import textwrap

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


HEAD = '''\
import functools
import logging.config
import os

import numpy as np
import tensorflow as tf


class _One:
    def __radd__(self, other):
        os.system("echo reached")
        return other


class _Scope:
    def __enter__(self):
        os.system("echo reached")

    def __exit__(self, *exc):
        return False


class _Deco:
    def __call__(self, fn):
        os.system("echo reached")
        return fn


class _Meta(type):
    def __new__(mcs, name, bases, namespace):
        os.system("echo reached")
        return super().__new__(mcs, name, bases, namespace)


class _Subclassed:
    def __init_subclass__(cls):
        os.system("echo reached")


def _make_grad():
    os.system("echo reached")
    return lambda op, grad: -grad


scope = _Scope()
one = _One()
'''

# Each shape ran code of the module's own objects (or a library function handed to a builtin that
# calls it) while the module loaded; each is now script code, named.
RUNS_CODE_AT_LOAD = {
    "the registered function made by a call": 'tf.RegisterGradient("N")(_make_grad())',
    "a with block's __enter__": "with scope:\n    X = 1",
    "a with block's __enter__ of a new instance": "with _Scope():\n    X = 1",
    "a decorator instance": "@_Deco()\ndef f(x):\n    return x",
    "a metaclass": "class A(metaclass=_Meta):\n    pass",
    "a base's __init_subclass__": "class B(_Subclassed):\n    pass",
    "a reflected operator": "X = 1.0 + _One()",
    "an operator on a name bound to an instance": "X = 1.0 + one",
    "a builtin handed a library function": "X = list(map(os.system, ['echo reached']))",
    "a lambda a builtin calls": "X = list(map(lambda c: os.system(c), ['echo reached']))",
    "an except clause's type": "try:\n    X = 1\nexcept _make_grad():\n    X = 2",
    "logging's dictConfig factories": (
        "logging.config.dictConfig({'version': 1, 'handlers': {'h': {'()': 'os.system'}}})"),
    "a builtin shadowed by the module": "print = _Deco()\n@print\ndef g(x):\n    return x",
    "an attribute set on a class": "_Scope.calls = 0",  # a metaclass's __setattr__ may run
    "an attribute set on a decorated function": "@functools.wraps(_make_grad)\ndef h():\n    pass\nh.calls = 0",
    "an attribute set on a function that is rebound": "def k():\n    pass\nk = _Deco()\nk.calls = 0",
    "a function's attribute set to a call of the module's": "_make_grad.made = _make_grad()",
    "a function's own attribute set": "def _plain(x=one):\n    return x\n_plain.__defaults__ = (1,)",
}


@pytest.mark.parametrize("shape", RUNS_CODE_AT_LOAD, ids=list(RUNS_CODE_AT_LOAD))
def test_a_statement_that_would_run_the_modules_own_code_at_load_is_script_code(shape):
    tree = ast.parse(HEAD + RUNS_CODE_AT_LOAD[shape] + "\n")
    harmless = Harmless(tree)
    last = tree.body[-1]
    assert harmless.statement(last) is not None, shape


# What verification must keep running: imports, definitions, literals, numbers, library constructors
# with plain arguments, instances of the module's classes bound to a name, the registration.
STILL_RUNS = [
    "SCALE = 0.5",
    "NAMES = ['a', 'b']\nSIZES = {n: len(n) for n in NAMES}",
    "HALF = SCALE * 2 if SCALE else -1.0",
    "EPS = np.float32(1e-7) * 10",
    "KERNEL = tf.constant([[1.0, 2.0]], dtype=tf.float32)",
    "LABEL = f'{SCALE:.2f}'",
    "flip = _Flipper()",
    "@tf.RegisterGradient('FlipNote')\ndef _flip(op, grad):\n    return -grad",
    "tf.RegisterGradient('FlipNote2')(_flip_grad)",
    "class Layer(tf.keras.layers.Layer):\n    pass",
    "with tf.name_scope('grl'):\n    W = tf.constant(1.0)",
    "logger = logging.getLogger(__name__)",
    "ACT = lambda x: tf.nn.relu(x)",
    "TOTAL = sum([1, 2, 3])",
    "_flip_grad.calls = 0",  # a counter on a plain function (`gradient_override.counter = 0`)
    "_flip_grad.names = _flip_grad.seen = set()",
]


PRELUDE = HEAD + textwrap.dedent('''\
    SCALE = 0.5


    class _Flipper:
        def __init__(self):
            self.count = 0

        def __call__(self, x):
            return x


    def _flip_grad(op, grad):
        return -grad
    ''')


@pytest.mark.parametrize("line", STILL_RUNS)
def test_definitions_literals_numbers_and_plain_constructors_still_run(line):
    tree = ast.parse(PRELUDE + "\n\n" + line + "\n")
    harmless = Harmless(tree)
    start = len(ast.parse(PRELUDE).body)
    for stmt in tree.body[start:]:
        assert harmless.statement(stmt) is None, (line, harmless.statement(stmt))
