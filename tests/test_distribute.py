"""The runtime under ``tf.distribute`` (MirroredStrategy over the two logical CPUs conftest makes):
a map entered around ``strategy.run`` or ``fit`` applies to the ops the replicas create, as TF1's
graph-wide map did; a map entered inside a replica applies to that replica; threads of the user's
own started inside a block see it too; where the runtime cannot tell which block a thread's ops
belong to, it raises. Every number is checked against TF1's, computed here in a ``tf.Graph`` with
TensorFlow's own map."""

import threading

import keras
import numpy as np
import pytest
import tensorflow as tf

import tf_grl_migrate
from tf_grl_migrate import FlipGradientBuilder, gradient_override_map, override_gradients, py_func

X = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(8, 4)
Y = np.arange(8, dtype=np.float32).reshape(8, 1)
_RNG = np.random.RandomState(0)
K1 = _RNG.randn(4, 5).astype(np.float32)
K2 = _RNG.randn(5, 1).astype(np.float32)


@tf.RegisterGradient("DistRev")
def _dist_rev(op, grad):
    return [-grad]


@tf.RegisterGradient("DistRevHalf")
def _dist_rev_half(op, grad):
    return [-0.5 * grad]


@tf.RegisterGradient("DistReluReversed")
def _dist_relu_reversed(op, grad):
    return [-grad * tf.cast(op.outputs[0] > 0, grad.dtype)]


@pytest.fixture(scope="module")
def strategy():
    devices = [d.name for d in tf.config.list_logical_devices("CPU")][:2]
    assert len(devices) == 2, "conftest configures two logical CPUs"
    return tf.distribute.MirroredStrategy(devices)


def _tf1_gradient(op_map, make, x):
    """TF1: ``make(x)`` built under ``op_map`` in a graph; d sum(make(x)) / dx."""
    with tf.Graph().as_default() as g:
        t = tf.constant(x)
        with g.gradient_override_map(op_map):
            y = make(t)
        grad = tf.compat.v1.gradients(tf.reduce_sum(y), t)[0]
        with tf.compat.v1.Session() as session:
            return session.run(grad)


def _times_three_then_identity(x):
    return tf.identity(x * 3.0)


def _replica_gradient(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(_times_three_then_identity(x))
    return tape.gradient(y, x)


def _per_replica_inputs(strategy):
    return strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(X[:2]) * float(ctx.replica_id_in_sync_group + 1))


def _results(strategy, value):
    results = strategy.experimental_local_results(value)
    assert len(results) == 2
    return [r.numpy() for r in results]


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_a_map_entered_around_strategy_run_applies_in_every_replica(strategy, mode):
    expected = _tf1_gradient({"Identity": "DistRev"}, _times_three_then_identity, X[:2])
    assert (expected == -3.0).all()

    def step(values):
        with gradient_override_map({"Identity": "DistRev"}):
            return strategy.run(_replica_gradient, args=(values,))

    run = tf.function(step) if mode == "function" else step
    for got in _results(strategy, run(_per_replica_inputs(strategy))):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_a_map_entered_inside_the_replica_function_applies_there(strategy, mode):
    expected = _tf1_gradient({"Identity": "DistRev"}, _times_three_then_identity, X[:2])

    def replica(x):
        with gradient_override_map({"Identity": "DistRev"}):
            return _replica_gradient(x)

    def step(values):
        return strategy.run(replica, args=(values,))

    run = tf.function(step) if mode == "function" else step
    for got in _results(strategy, run(_per_replica_inputs(strategy))):
        np.testing.assert_array_equal(got, expected)
    # the caller's thread had no block: its ops after the run are ordinary
    np.testing.assert_array_equal(_replica_gradient(tf.constant(X[:2])).numpy(), np.full((2, 4), 3.0))


def test_a_map_entered_inside_one_replica_applies_to_that_replica_only(strategy):
    def replica(x):
        if tf.get_static_value(tf.distribute.get_replica_context().replica_id_in_sync_group) == 0:
            with gradient_override_map({"Identity": "DistRev"}):
                return _replica_gradient(x)
        return _replica_gradient(x)

    first, second = _results(strategy, strategy.run(replica, args=(_per_replica_inputs(strategy),)))
    np.testing.assert_array_equal(first, np.full((2, 4), -3.0))
    np.testing.assert_array_equal(second, np.full((2, 4), 3.0))


def test_a_replica_map_nested_in_the_callers_map_takes_both(strategy):
    """The caller maps Identity, a replica maps Relu too: the replica's ops see both maps."""
    def make(x):
        return tf.nn.relu(tf.identity(x * 3.0))

    with tf.Graph().as_default() as g:
        t = tf.constant(X[:2])
        with g.gradient_override_map({"Identity": "DistRev"}), g.gradient_override_map({"Relu": "DistRev"}):
            y = make(t)
        grad = tf.compat.v1.gradients(tf.reduce_sum(y), t)[0]
        with tf.compat.v1.Session() as session:
            expected = session.run(grad)

    def replica(x):
        with gradient_override_map({"Relu": "DistRev"}):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(make(x))
            return tape.gradient(y, x)

    with gradient_override_map({"Identity": "DistRev"}):
        values = strategy.run(replica, args=(tf.constant(X[:2]),))
    for got in _results(strategy, values):
        np.testing.assert_array_equal(got, expected)


def _tf1_one_sgd_step(op_map, activation):
    """TF1: one SGD step (0.1) of dense -> activation -> dense on mean squared error, the
    activation built under ``op_map``: (lower kernel, upper kernel) after it."""
    with tf.Graph().as_default() as g:
        k1, k2 = tf.compat.v1.Variable(K1), tf.compat.v1.Variable(K2)
        with g.gradient_override_map(op_map):
            hidden = activation(tf.matmul(X, k1))
        loss = tf.reduce_mean(tf.square(tf.matmul(hidden, k2) - Y))
        grads = tf.compat.v1.gradients(loss, [k1, k2])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            g1, g2 = session.run(grads)
    return K1 - 0.1 * g1, K2 - 0.1 * g2


def _keras_one_fit_step(middle, strategy=None, op_map=None):
    """The same model in Keras, one ``fit`` step, under ``strategy`` and, if given, ``op_map``
    entered around ``fit`` in the calling thread."""
    scope = strategy.scope() if strategy is not None else tf.init_scope()
    with scope:
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, use_bias=False), middle,
                                  keras.layers.Dense(1, use_bias=False)])
        model.layers[0].kernel.assign(K1)
        model.layers[2].kernel.assign(K2)
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    if op_map is None:
        model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    else:
        with gradient_override_map(op_map):
            model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    return model.layers[0].kernel.numpy(), model.layers[2].kernel.numpy()


@pytest.mark.parametrize("distributed", [False, True], ids=["one device", "two replicas"])
def test_keras_fit_under_a_model_wide_map_trains_every_layer_as_tf1(strategy, distributed):
    """Both kernels as TF1's: the lower one through the mapped Relu, the upper one beside it (a
    variable read right after a mapped op is still watched by fit's tape)."""
    lower, upper = _tf1_one_sgd_step({"Relu": "DistReluReversed"}, tf.nn.relu)
    got_lower, got_upper = _keras_one_fit_step(keras.layers.ReLU(), strategy if distributed else None,
                                               {"Relu": "DistReluReversed"})
    np.testing.assert_allclose(got_lower, lower, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_upper, upper, rtol=1e-5, atol=1e-6)
    assert np.abs(got_upper - K2).max() > 1e-3 and np.abs(got_lower - K1).max() > 1e-3


def test_keras_fit_with_the_gradient_reversal_layer_under_the_strategy_is_tf1s(strategy):
    lower, upper = _tf1_one_sgd_step({"Identity": "DistRevHalf"}, tf.identity)
    layer_type = tf_grl_migrate.GradientReversal
    got_lower, got_upper = _keras_one_fit_step(layer_type(hp_lambda=0.5), strategy)
    np.testing.assert_allclose(got_lower, lower, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_upper, upper, rtol=1e-5, atol=1e-6)
    plain_lower, _ = _keras_one_fit_step(keras.layers.Identity(), strategy)
    assert np.sign(got_lower - K1).tolist() == (-np.sign(plain_lower - K1)).tolist()  # reversed, not plain


def test_a_thread_started_inside_a_block_sees_the_map_while_it_is_entered():
    expected = _tf1_gradient({"Identity": "DistRev"}, _times_three_then_identity, X[:2])
    got, inside, done = {}, threading.Event(), threading.Event()

    def worker():
        got["in the block"] = _replica_gradient(tf.constant(X[:2])).numpy()
        inside.set()
        done.wait(30)
        got["after the block"] = _replica_gradient(tf.constant(X[:2])).numpy()

    with gradient_override_map({"Identity": "DistRev"}):
        thread = threading.Thread(target=worker)
        thread.start()
        assert inside.wait(30)
    done.set()
    thread.join(30)
    np.testing.assert_array_equal(got["in the block"], expected)
    np.testing.assert_array_equal(got["after the block"], np.full((2, 4), 3.0))


def test_a_thread_started_while_blocks_are_active_on_two_threads_raises_on_a_mapped_op():
    entered, release = threading.Event(), threading.Event()
    errors = {}

    def other_block():
        with gradient_override_map({"Identity": "DistRev"}):
            entered.set()
            release.wait(30)

    def started_thread():
        try:
            _replica_gradient(tf.constant(X[:2]))
        except RuntimeError as exc:
            errors["raised"] = str(exc)

    holder = threading.Thread(target=other_block)
    holder.start()
    assert entered.wait(30)
    try:
        with gradient_override_map({"Identity": "DistRev"}):
            thread = threading.Thread(target=started_thread)
            thread.start()
            thread.join(30)
    finally:
        release.set()
        holder.join(30)
    assert "tf.distribute" in errors["raised"] and "inside the replica function" in errors["raised"]


def test_the_map_leaves_no_callback_behind_on_any_thread(strategy):
    from tensorflow.python.eager import context

    before = list(context.context().op_callbacks)
    with gradient_override_map({"Identity": "DistRev"}):
        strategy.run(_replica_gradient, args=(_per_replica_inputs(strategy),))
    assert list(context.context().op_callbacks) == before
    assert threading.getprofile() is None


def test_flip_gradient_builder_counts_every_replicas_call(strategy):
    flip = FlipGradientBuilder()

    def replica(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(flip(x, 0.5) * 2.0)
        return tape.gradient(y, x)

    values = strategy.run(replica, args=(_per_replica_inputs(strategy),))
    for got in _results(strategy, values):
        np.testing.assert_array_equal(got, np.full((2, 4), -1.0))
    assert flip.num_calls == 2


def test_override_gradients_and_py_func_under_the_strategy(strategy):
    expected = _tf1_gradient({"Identity": "DistRev"}, _times_three_then_identity, X[:2])
    with override_gradients({"Identity": "DistRev"}):
        values = strategy.run(_replica_gradient, args=(_per_replica_inputs(strategy),))
    for got in _results(strategy, values):
        np.testing.assert_array_equal(got, expected)

    def replica(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = py_func(lambda a: a * 2.0, [x], [tf.float32], grad=lambda op, dy: [-dy])[0]
            y = tf.reduce_sum(y)
        return tape.gradient(y, x)

    for got in _results(strategy, strategy.run(replica, args=(_per_replica_inputs(strategy),))):
        np.testing.assert_array_equal(got, np.full((2, 4), -1.0))
