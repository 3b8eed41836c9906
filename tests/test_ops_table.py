"""The generated op table against the installed TensorFlow: it is what the generator writes for
the pinned version, a sample of its entries re-traced here create exactly what it says, and the
facts the migrator's proofs rely on hold."""

import pathlib
import subprocess
import sys

import harness
import pytest

tf = pytest.importorskip("tensorflow")

from tf_grl_migrate.knowledge import ops  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the op types the first releases knew by hand, every callable of each, and a spread of the rest
KNOWN = ("Identity", "Sign", "Round", "Floor", "Ceil", "Relu", "Sigmoid", "Tanh", "Exp", "MatMul", "Maximum", "Minimum")
SAMPLE = {*KNOWN, *sorted(ops.OP_TYPES)[::9]}
ENTRIES = sorted(((op, name) for op in ops.OP_TYPES.values() for name in op.callables if op.name in SAMPLE),
                 key=lambda entry: entry[1])


def test_table_is_what_the_generator_writes_for_the_pinned_tensorflow():
    assert ops.tf_version() == tf.__version__
    assert "tensorflow_version" not in ops.table()  # the callables, read from the same document
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_op_table.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("op,name", ENTRIES, ids=[n for _, n in ENTRIES])
def test_callable_creates_exactly_that_op_type_and_forwards_its_name(op, name):
    fn = harness.resolve_tf(name)
    graph = tf.Graph()
    with graph.as_default():
        inputs = [tf.compat.v1.placeholder(tf.float32, [3, 3]) for _ in range(op.arity)]
        fn(*inputs, name="forwarded")
    (made,) = [o for o in graph.get_operations() if o.type != "Placeholder"]
    assert made.type == op.name and made.name.startswith("forwarded")  # the op, or the scope it is made in
    assert [t.op for t in made.inputs] == [t.op for t in inputs]  # fed by the inputs, in order


def test_the_hand_known_op_types_are_all_still_there_with_their_usual_spellings():
    assert set(KNOWN) <= set(ops.OP_TYPES)
    for spelling, op in [("tensorflow.identity", "Identity"), ("tensorflow.compat.v1.math.ceil", "Ceil"),
                         ("tensorflow.python.ops.gen_nn_ops.relu", "Relu"), ("tensorflow.nn.relu", "Relu"),
                         ("tensorflow.python.ops.gen_math_ops.mat_mul", "MatMul"), ("tensorflow.exp", "Exp")]:
        assert ops.op_type_of_callable({spelling}).name == op, spelling
    assert ops.OP_TYPES["MatMul"].arity == 2 and ops.OP_TYPES["Sign"].arity == 1


def test_facts_the_proofs_rely_on():
    # tf.matmul makes MatMul for matrices and BatchMatMulV2 for batches: never wrapped, but known
    # not to make a Sigmoid (both ranks are in the table)
    assert ops.op_type_of_callable({"tensorflow.matmul"}) is None
    assert ops.ops_created({"tensorflow.matmul"}) == {"MatMul", "BatchMatMulV2"}
    # calls that cannot create a straight-through estimator's Sign op
    assert ops.ops_created({"tensorflow.clip_by_value"}) == {"Maximum", "Minimum"}
    assert ops.ops_created({"tensorflow.stop_gradient"}) == {"StopGradient"}
    assert ops.ops_created({"tensorflow.some_function_tf_never_had"}) is None


def test_later_versions_of_an_op_type_are_registered_ops_of_the_same_name():
    """GRL116 and the runtime map's warning read which op types TensorFlow versioned: `a + b` made
    Add before TF 1.15 and makes AddV2 now (the operator table says so), and each later version is
    an op TensorFlow registers under the older name with a higher `V<n>`."""
    from tensorflow.python.framework import op_def_registry

    assert ops.operator_op_type("a + b") == "AddV2" and ops.later_versions_of("Add") == {"AddV2"}
    assert ops.later_versions_of("AddV2") == frozenset() and ops.later_versions_of("Sign") == frozenset()
    assert ops.later_versions_of("BatchMatMulV2") == {"BatchMatMulV3"}
    for name in ("Add", "Select", "BatchMatMul", "FusedBatchNorm", "Concat", "MaxPool"):
        later = ops.later_versions_of(name)
        assert later and all(v.startswith(name) and op_def_registry.get(v) is not None for v in later), name


def test_callables_traced_with_their_arguments_are_known_but_never_wrapped():
    # tf.cast's dtype, tf.reshape's shape, tf.nn.conv2d's strides and padding: traced with values for
    # them (every dtype for a cast), so a Sign block around a convolution is proven to make no other Sign
    assert ops.ops_created({"tensorflow.cast"}) == {"Cast"}
    assert ops.ops_created({"tensorflow.nn.conv2d"}) == {"Conv2D"}
    assert ops.ops_created({"tensorflow.reshape"}) == {"Const", "Reshape"}
    assert ops.ops_created({"tensorflow.math.scalar_mul"}) == {"Const", "Mul"}
    for name in ("tensorflow.cast", "tensorflow.nn.conv2d", "tensorflow.reshape", "tensorflow.concat"):
        entry = ops.table()[name]
        assert entry["argued"] and not entry["direct"], name
        assert ops.op_type_of_callable({name}) is None, name
    # what the table says of one, re-traced here with an argument the generator did not use
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.int32, [2, 3])
        tf.cast(x, tf.complex64)
        tf.reshape(x, [3, 2])
    made = {o.type for o in graph.get_operations()} - {"Placeholder"}
    assert made <= ops.ops_created({"tensorflow.cast"}) | ops.ops_created({"tensorflow.reshape"})


def test_names_tf2_has():
    for name in ("tensorflow.negative", "tensorflow.compat.v1.where", "tensorflow.nn.relu",
                 "tensorflow.python.ops.gen_nn_ops.relu_grad", "tensorflow.compat.v1.nn.relu"):
        assert ops.exists_in_tf2(name), name
    for name in ("tensorflow.neg", "tensorflow.contrib.layers.flatten", "tensorflow.python.ops.gen_nn_ops._relu_grad",
                 "tensorflow.select"):
        assert not ops.exists_in_tf2(name), name


def test_canonical_names():
    assert ops.canonical("tensorflow.compat.v1.sign") == "tensorflow.sign"
    assert ops.canonical("tensorflow.python.ops.math_ops.sign") == "tensorflow.python.ops.math_ops.sign"
    assert ops.op_type_of_callable({"tensorflow.compat.v1.math.ceil"}).name == "Ceil"


def test_the_table_is_not_read_for_help_or_files_without_candidates(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\n")
    code = (
        "import sys; from tf_grl_migrate import cli; from tf_grl_migrate.knowledge import ops\n"
        "sys.argv = ['tf-grl-migrate', sys.argv[1]]\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "assert ops._document.cache_info().currsize == 0 and ops.api_names.cache_info().currsize == 0\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_names_in_internal_modules_the_file_does_not_cover_are_never_refused_on_a_guess():
    assert ops.exists_in_tf2("tensorflow.python.ops.math_grad._SigmoidGrad")
    assert ops.exists_in_tf2("tensorflow.python.framework.ops.convert_to_tensor")


def test_operators_are_keyed_as_the_migrator_spells_them():
    """Each operator the table knows, read back from source as the analysis reads it (also as an
    augmented assignment), finds its entry; those a block may wrap are among them."""
    import libcst as cst

    from tf_grl_migrate.migrator.nodes import operator_spelling

    operators = ops._document()["operators"]
    assert set(ops.WRAPPABLE_OPERATORS) <= set(operators.values())
    for spelling, op_type in operators.items():
        expr = cst.parse_expression(spelling)
        assert ops.operator_op_type(operator_spelling(expr)) == op_type
        if spelling != "-a":
            augmented = cst.parse_statement(spelling.replace(" ", "", 1).replace(" ", "= ", 1) + "\n").body[0]
            assert isinstance(augmented, cst.AugAssign)
            assert ops.operator_op_type(operator_spelling(augmented)) == op_type


def test_attributes_of_real_tensorflow_objects_are_not_api_names():
    """``tf.__version__`` (pre-1.0 DANN copies), ``tf.float32.is_floating``, ``tf.Tensor.shape``:
    a module's own dunder or an attribute of an object the names file lists exists in TF2; a name
    missing from a module the file lists does not."""
    for name in ("tensorflow.__version__", "tensorflow.__version__.startswith", "tensorflow.float32.is_floating",
                 "tensorflow.Tensor.shape", "tensorflow.compat.v1.__version__"):
        assert ops.exists_in_tf2(name), name
    for name in ("tensorflow.nn.reluu", "tensorflow.random_uniform", "tensorflow.contrib"):
        assert not ops.exists_in_tf2(name), name


def test_the_hand_written_tables_name_what_tensorflow_has():
    """The few tables ops.py writes by hand (the callables a reversal body or a receiver is spelt
    with, the gradients an override may borrow) name objects TensorFlow has: a typo, or a name a
    new TensorFlow moved, fails here instead of quietly matching nothing."""
    from tensorflow.python.framework import ops as tf_ops

    listed = {*ops.NEGATIVE, *ops.MULTIPLY, *ops.SCALAR_MUL, *ops.REGISTER_GRADIENT, *ops.DEFAULT_GRAPH,
              *ops.GRAPH_CLASS}
    removed = {"tensorflow." + old for old in ops._tf_renames.RENAMED}  # tf.neg: TF 1.0's, kept on purpose
    for name in sorted(listed - removed):  # a TF1 name (tf.get_default_graph): as tf.compat.v1 has it
        v1 = name.replace("tensorflow.", "tensorflow.compat.v1.", 1)
        try:
            found = harness.resolve_tf(name)
        except AttributeError:
            found = harness.resolve_tf(v1)
        assert callable(found), name
    for gradient in ops.BUILTIN_GRADIENTS:  # a gradient TensorFlow registers under that name
        assert tf_ops.gradient_registry.lookup(gradient) is not None, gradient
        assert gradient in ops.op_type_names()
    from tensorflow.python.framework import op_def_registry

    for op_type in ops.PY_FUNC_TYPES | set(ops.WRAPPABLE_OPERATORS):
        assert op_def_registry.get(op_type) is not None, op_type
