"""override_gradients: TF1's op-type gradient overrides, honoured by TF2's tapes.

Every expected gradient is TF1's own: the same computation built in a legacy graph, entered
with ``graph.gradient_override_map`` and differentiated with ``tf.compat.v1.gradients`` in a
Session (which TensorFlow 2 still honours), compared with the TF2 result under the block.
"""

import threading

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from tensorflow.python.framework import ops as tf_ops  # noqa: E402

from tf_grl_migrate import override_gradients, runtime  # noqa: E402

RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 6, 6, 3)).astype(np.float32)


def _guided_relu(op, grad):
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0, grad.dtype)


if "GuidedReluOG" not in tf_ops._gradient_registry._registry:
    tf.RegisterGradient("GuidedReluOG")(_guided_relu)


def _registry_snapshot():
    return {k: v for k, v in tf_ops._gradient_registry._registry.items()}


def _conv_net(x, kernels):
    """The same small network for the TF1 graph and for TF2: conv, relu, conv, relu, sum."""
    h = tf.nn.relu(tf.nn.conv2d(x, kernels[0], 1, "SAME"))
    h = tf.nn.relu(tf.nn.conv2d(h, kernels[1], 1, "SAME"))
    return tf.reduce_sum(h[..., 0])


KERNELS = [RNG.normal(size=(3, 3, 3, 4)).astype(np.float32), RNG.normal(size=(3, 3, 4, 2)).astype(np.float32)]


def tf1_gradient(build, op_type_map, inputs=X):
    """TF1 semantics: legacy graph, gradient_override_map around the forward pass, Session."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, inputs.shape)
        with graph.gradient_override_map(op_type_map):
            y = build(x)
        (g,) = tf.compat.v1.gradients(y, [x])
        with tf.compat.v1.Session(graph=graph) as sess:
            return sess.run(g, {x: inputs})


def tape_gradient(build, inputs=X, output_gradients=None):
    x = tf.constant(inputs)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = build(x)
    return tape, y, x


def test_guided_backprop_eager_matches_tf1():
    build = lambda x: _conv_net(x, KERNELS)  # noqa: E731
    expected = tf1_gradient(build, {"Relu": "GuidedReluOG"})
    plain = tf1_gradient(build, {})
    assert not np.allclose(expected, plain)  # the override changes the gradient
    tape, y, x = tape_gradient(build)
    with override_gradients({"Relu": "GuidedReluOG"}):
        got = tape.gradient(y, x)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_function_value_and_registered_name_agree():
    build = lambda x: _conv_net(x, KERNELS)  # noqa: E731
    tape, y, x = tape_gradient(build)
    with override_gradients({"Relu": _guided_relu}):
        by_function = tape.gradient(y, x)
    tape, y, x = tape_gradient(build)
    with override_gradients({"Relu": "GuidedReluOG"}):
        by_name = tape.gradient(y, x)
    np.testing.assert_array_equal(by_function.numpy(), by_name.numpy())


def test_inside_tf_function_the_trace_made_in_the_block_keeps_the_override():
    build = lambda x: _conv_net(x, KERNELS)  # noqa: E731
    guided = tf1_gradient(build, {"Relu": "GuidedReluOG"})
    plain = tf1_gradient(build, {})

    @tf.function
    def saliency(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = build(x)
        return tape.gradient(y, x)

    before = saliency(tf.constant(X))  # traced before the block: ordinary gradients, kept
    with override_gradients({"Relu": "GuidedReluOG"}):
        inside = saliency(tf.constant(X))  # same trace as before
        retraced = saliency.experimental_get_tracing_count()
        fresh = tf.function(saliency.python_function)
        traced_inside = fresh(tf.constant(X))
    later = fresh(tf.constant(X))  # the trace made in the block keeps the override
    np.testing.assert_allclose(before.numpy(), plain, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(inside.numpy(), plain, rtol=1e-5, atol=1e-6)
    assert retraced == 1
    np.testing.assert_allclose(traced_inside.numpy(), guided, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(later.numpy(), guided, rtol=1e-5, atol=1e-6)


def test_tf_gradients_in_a_legacy_graph_inside_the_block():
    build = lambda x: _conv_net(x, KERNELS)  # noqa: E731
    expected = tf1_gradient(build, {"Relu": "GuidedReluOG"})
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, X.shape)
        y = build(x)
        with override_gradients({"Relu": "GuidedReluOG"}):
            (g,) = tf.compat.v1.gradients(y, [x])
        with tf.compat.v1.Session(graph=graph) as sess:
            got = sess.run(g, {x: X})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["functional", "sequential"])
def test_keras_guided_backprop_matches_tf1(kind):
    keras.utils.set_random_seed(11)
    if kind == "functional":
        inputs = keras.Input((6, 6, 3))
        h = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
        h = keras.layers.Conv2D(2, 3, padding="same", activation="relu")(h)
        model = keras.Model(inputs, keras.layers.GlobalAveragePooling2D()(h))
    else:
        model = keras.Sequential([
            keras.Input((6, 6, 3)),
            keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
            keras.layers.Conv2D(2, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
        ])
    (k1, b1), (k2, b2) = [(layer.kernel.numpy(), layer.bias.numpy()) for layer in model.layers if layer.weights]

    def same_net(x):  # the model's own math, built in a TF1 graph for the reference
        h = tf.nn.relu(tf.nn.conv2d(x, k1, 1, "SAME") + b1)
        h = tf.nn.relu(tf.nn.conv2d(h, k2, 1, "SAME") + b2)
        return tf.reduce_sum(tf.reduce_mean(h, axis=[1, 2])[:, 1])

    expected = tf1_gradient(same_net, {"Relu": "GuidedReluOG"})
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(model(x)[:, 1])
    with override_gradients({"Relu": "GuidedReluOG"}):
        saliency = tape.gradient(y, x)
    np.testing.assert_allclose(saliency.numpy(), expected, rtol=1e-4, atol=1e-6)


def test_identity_as_straight_through_target_and_a_reversal_function():
    w = RNG.normal(size=(4, 3)).astype(np.float32)
    inputs = RNG.normal(size=(4, 3)).astype(np.float32)
    ste = tf1_gradient(lambda x: tf.reduce_sum(tf.sign(x) * w), {"Sign": "Identity"}, inputs)
    tape, y, x = tape_gradient(lambda x: tf.reduce_sum(tf.sign(x) * w), inputs)
    with override_gradients({"Sign": "Identity"}):
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), ste, rtol=1e-6)
    np.testing.assert_allclose(ste, w)
    tape, y, x = tape_gradient(lambda x: tf.reduce_sum(tf.identity(x) * w), inputs)
    with override_gradients({"Identity": lambda op, grad: -0.25 * grad}):
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), -0.25 * w, rtol=1e-6)


def test_restored_on_exit_and_when_the_block_raises():
    before = _registry_snapshot()
    with override_gradients({"Relu": "GuidedReluOG", "Sign": "Identity"}):
        assert _registry_snapshot() != before
    assert _registry_snapshot() == before
    with pytest.raises(KeyError), override_gradients({"Relu": "GuidedReluOG"}):
        raise KeyError("boom")
    assert _registry_snapshot() == before


def test_nested_blocks_inner_wins_outer_restored():
    inputs = np.array([[1.0, -2.0, 3.0]], np.float32)
    tape = None

    def grad():
        x = tf.constant(inputs)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.identity(x) * 2.0)
        return tape.gradient(y, x).numpy()

    before = _registry_snapshot()
    with override_gradients({"Identity": lambda op, g: -g}):
        np.testing.assert_array_equal(grad(), [[-2.0, -2.0, -2.0]])
        with override_gradients({"Identity": lambda op, g: 3.0 * g, "Sign": "Identity"}):
            np.testing.assert_array_equal(grad(), [[6.0, 6.0, 6.0]])
        np.testing.assert_array_equal(grad(), [[-2.0, -2.0, -2.0]])
        assert tf_ops._gradient_registry._registry["Sign"] is before["Sign"]
    np.testing.assert_array_equal(grad(), [[2.0, 2.0, 2.0]])
    assert tape is None and _registry_snapshot() == before


def test_blocks_left_out_of_order_by_two_threads_leave_the_ordinary_gradients():
    before = _registry_snapshot()
    outer_in, inner_in, outer_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with override_gradients({"Identity": lambda op, g: -g}):
            outer_in.set()
            inner_in.wait(5)
        outer_out.set()  # leaves while the second thread's block is still active

    def second():
        outer_in.wait(5)
        with override_gradients({"Sign": "Identity"}):
            inner_in.set()
            outer_out.wait(5)
            seen["identity_inside"] = tf_ops._gradient_registry._registry["Identity"] is before["Identity"]

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"identity_inside": True}  # the first block's exit restored Identity, not Sign
    assert _registry_snapshot() == before

    result = {}

    def after_the_block():
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.identity(x)
        result["g"] = tape.gradient(y, x).numpy()

    thread = threading.Thread(target=after_the_block)
    thread.start()
    thread.join(10)
    np.testing.assert_array_equal(result["g"], [1.0, 1.0])


@pytest.mark.parametrize(
    "mapping, error, text",
    [
        ({"Relux": "Identity"}, ValueError, "'Relux' is not a TensorFlow op type"),
        ({"Relu": "NoSuchGradient"}, ValueError, "no gradient is registered as 'NoSuchGradient'"),
        ({"Relu": 3.0}, TypeError, "must be a registered gradient name or an (op, grad) function, got float"),
        ({1: "Identity"}, TypeError, "keys must be strings"),
        ([("Relu", "Identity")], TypeError, "takes a dict"),
        ({"Sign": "Identity", "Relu": "NoSuchGradient"}, ValueError, "NoSuchGradient"),
    ],
    ids=["unknown-op-type", "unregistered-target", "wrong-value", "non-string-key", "not-a-dict", "half-valid"],
)
def test_bad_input_raises_before_anything_changes(mapping, error, text):
    before = _registry_snapshot()
    with pytest.raises(error) as raised, override_gradients(mapping):
        pytest.fail("the block must not run")
    assert text in str(raised.value)
    assert _registry_snapshot() == before


def test_reading_what_the_eager_tape_did_not_keep_raises_a_clear_error():
    tape, y, x = tape_gradient(lambda x: tf.identity(x), np.ones((2,), np.float32))
    with override_gradients({"Identity": lambda op, grad: grad * op.inputs[0]}), pytest.raises(
            ValueError, match="does not keep for 'Identity' ops"):
        tape.gradient(y, x)


def test_incompatible_tensorflow_raises_one_clear_error_naming_the_version(monkeypatch):
    before = _registry_snapshot()
    monkeypatch.setattr(tf_ops, "_gradient_registry", object())
    with pytest.raises(RuntimeError, match=f"TensorFlow {tf.__version__} does not have"), override_gradients(
            {"Relu": "GuidedReluOG"}):
        pytest.fail("the block must not run")
    monkeypatch.undo()
    assert _registry_snapshot() == before


def test_exported_without_importing_tensorflow_at_package_import():
    import tf_grl_migrate

    assert tf_grl_migrate.override_gradients is runtime.override_gradients
    assert "override_gradients" in tf_grl_migrate.__all__
    assert "GradientTape" in runtime.override_gradients.__doc__


def _sign_grad_by_py_func(op, grad):  # the gradient itself calls py_func(...)[0], as TF1 code did
    return [tf.compat.v1.py_func(lambda a, d: (d * (np.abs(a) <= 1.0)).astype(np.float32), [op.inputs[0], grad],
                                 [tf.float32])[0]]


if "SignByPyFuncOG" not in tf_ops._gradient_registry._registry:
    tf.RegisterGradient("SignByPyFuncOG")(_sign_grad_by_py_func)


def test_a_gradient_calling_py_func_gets_tf1s_structure_eagerly():
    """TF1 ran gradient functions in a graph, where ``py_func(..., [tf.float32])[0]`` is the whole
    output; run eagerly it would be a row. The block runs it as TF1 did, on every call."""
    build = tf.sign
    expected = tf1_gradient(build, {"Sign": "SignByPyFuncOG"})
    for _ in range(2):
        tape, y, x = tape_gradient(build)
        with override_gradients({"Sign": "SignByPyFuncOG"}):
            got = tape.gradient(y, x)
        np.testing.assert_allclose(got.numpy(), expected)


def test_leaving_a_block_never_entered_says_so():
    block = override_gradients({"Relu": "GuidedReluOG"})
    with pytest.raises(RuntimeError, match="never entered"):
        block.__exit__(None, None, None)
