"""The op table against the installed TensorFlow: every callable creates exactly its op type."""

import importlib

import pytest

tf = pytest.importorskip("tensorflow")

from tf_grl_migrate import ops  # noqa: E402

ENTRIES = [(op, name) for op in ops.OP_TYPES.values() for name in op.callables]


def _resolve(name):
    if name.startswith("tensorflow.python."):
        module, _, attr = name.rpartition(".")
        return getattr(importlib.import_module(module), attr)
    parts = name.split(".")[1:]
    for root in (tf, tf.compat.v1):  # canonical names drop the compat.v1 prefix (tf.ceil is v1-only)
        obj = root
        try:
            for part in parts:
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    raise AttributeError(name)


@pytest.mark.parametrize("op,name", ENTRIES, ids=[n for _, n in ENTRIES])
def test_callable_creates_exactly_that_op_type(op, name):
    fn = _resolve(name)
    specs = [tf.TensorSpec([3, 3], tf.float32)] * op.arity
    graph = tf.function(lambda *args: fn(*args)).get_concrete_function(*specs).graph
    assert op.name in {o.type for o in graph.get_operations()}
    named = tf.function(lambda *args: fn(*args, name="forwarded")).get_concrete_function(*specs).graph
    assert any(o.type == op.name and o.name.startswith("forwarded") for o in named.get_operations())


def test_canonical_names():
    assert ops.canonical("tensorflow.compat.v1.sign") == "tensorflow.sign"
    assert ops.canonical("tensorflow.python.ops.math_ops.sign") == "tensorflow.python.ops.math_ops.sign"
    assert ops.op_type_of_callable({"tensorflow.compat.v1.math.ceil"}).name == "Ceil"
