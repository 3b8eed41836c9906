"""The runtime shim against real TensorFlow: every behaviour asserted with numbers."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from tf_grl_migrate import DANNLambdaScheduler, FlipGradientBuilder, GradientReversal, flip_gradient  # noqa: E402

FLOATS = [tf.float16, tf.bfloat16, tf.float32, tf.float64]
RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 3, size=(4, 3))
W = RNG.uniform(-2, 2, size=(4, 3))


def _grad(fn, x, w):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        loss = tf.reduce_sum(y * w)
    return y, tape.gradient(loss, x)


def _expected(w, l, dtype):
    # upstream gradient is w (in the input dtype); the reversal multiplies it by -l in that dtype
    w_t = tf.cast(w, dtype)
    return (w_t * tf.cast(-l, dtype)).numpy()


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("kind", ["float", "tensor", "variable"])
@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
def test_forward_identity_and_reversed_gradient(dtype, kind, mode):
    x = tf.cast(X, dtype)
    w = tf.cast(W, dtype)
    lam = {"float": 0.7, "tensor": tf.constant(0.7), "variable": tf.Variable(0.7)}[kind]

    def step(x):
        return _grad(lambda t: flip_gradient(t, lam), x, w)

    if mode == "function":
        step = tf.function(step)
    elif mode == "jit":
        step = tf.function(step, jit_compile=True)
    y, g = step(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y.numpy(), x.numpy())  # bit-exact identity
    assert g.dtype == dtype
    np.testing.assert_allclose(
        np.asarray(g, np.float64),
        np.asarray(_expected(w, 0.7, dtype), np.float64),
        rtol=1e-2 if dtype in (tf.float16, tf.bfloat16) else 1e-6,
    )


def test_float32_gradient_is_exactly_minus_l_times_upstream():
    x = tf.constant(X, tf.float32)
    w = tf.constant(W, tf.float32)
    _, g = _grad(lambda t: flip_gradient(t, 0.3), x, w)
    np.testing.assert_array_equal(g.numpy(), (-np.float32(0.3) * W.astype(np.float32)))


def test_variable_lambda_changes_gradient_without_retrace():
    lam = tf.Variable(1.0)
    traces = []
    x = tf.constant(X, tf.float32)

    @tf.function
    def step(x):
        traces.append(1)
        return _grad(lambda t: flip_gradient(t, lam), x, tf.ones_like(x))[1]

    g1 = step(x)
    lam.assign(0.25)
    g2 = step(x)
    assert len(traces) == 1
    np.testing.assert_allclose(g1.numpy(), -1.0)
    np.testing.assert_allclose(g2.numpy(), -0.25)


def test_second_order_gradients():
    x = tf.constant(X, tf.float64)
    w = tf.constant(W, tf.float64)
    lam = 0.5
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = flip_gradient(x, lam)
            loss = tf.reduce_sum(y * y * w)
        g = inner.gradient(loss, x)  # -lam * 2 x w
        s = tf.reduce_sum(g)
    gg = outer.gradient(s, x)  # g depends on x through the reversal again: lam**2 * 2 w
    np.testing.assert_allclose(g.numpy(), -lam * 2 * X * W)
    np.testing.assert_allclose(gg.numpy(), lam**2 * 2 * W)


@pytest.mark.parametrize("kind", ["tensor", "variable"])
def test_gradient_wrt_lambda_is_none_or_zero(kind):
    lam = tf.Variable(0.5) if kind == "variable" else tf.constant(0.5)
    x = tf.constant(X, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        if kind == "tensor":
            tape.watch(lam)
        y = flip_gradient(x, lam)
        loss = tf.reduce_sum(y)
    gx, gl = tape.gradient(loss, [x, lam])
    np.testing.assert_allclose(gx.numpy(), -0.5)
    assert gl is None or float(gl) == 0.0


def test_legacy_graph_mode_session():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [4, 3])
        lam = tf.compat.v1.placeholder_with_default(tf.constant(0.4), [])
        y = flip_gradient(x, lam)
        g = tf.compat.v1.gradients(tf.reduce_sum(y * W.astype(np.float32)), x)[0]
        builder = FlipGradientBuilder()
        y2 = builder(x, 2.0)
        g2 = tf.compat.v1.gradients(tf.reduce_sum(y2), x)[0]
        with tf.compat.v1.Session() as sess:
            yv, gv, g2v = sess.run([y, g, g2], {x: X.astype(np.float32)})
    np.testing.assert_array_equal(yv, X.astype(np.float32))
    np.testing.assert_allclose(gv, -0.4 * W.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(g2v, -2.0)
    assert builder.num_calls == 1


def test_builder_counts_calls_like_the_legacy_class():
    flip = FlipGradientBuilder()
    x = tf.constant(X, tf.float32)
    _, g = _grad(lambda t: flip(t, l=1.5), x, tf.ones_like(x))
    flip(x)
    assert flip.num_calls == 2
    np.testing.assert_allclose(g.numpy(), -1.5)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.bool, tf.string])
@pytest.mark.parametrize("mode", ["eager", "function"])
def test_non_float_input_is_a_type_error_naming_the_dtype(dtype, mode):
    x = tf.zeros([2], dtype=dtype) if dtype != tf.string else tf.constant(["a", "b"])
    fn = (lambda t: flip_gradient(t, 1.0)) if mode == "eager" else tf.function(lambda t: flip_gradient(t, 1.0))
    with pytest.raises(TypeError, match=dtype.name):
        fn(x)


def test_non_scalar_lambda_is_rejected():
    with pytest.raises(ValueError, match="scalar"):
        flip_gradient(tf.ones([2]), tf.constant([1.0, 2.0]))


def test_indexed_slices_upstream_stays_sparse_and_reversed():
    table = tf.Variable(tf.constant(X, tf.float32))
    with tf.GradientTape() as tape:
        y = tf.gather(flip_gradient(table, 2.0), [0, 2])
        loss = tf.reduce_sum(y)
    g = tape.gradient(loss, table)
    assert isinstance(g, tf.IndexedSlices)
    dense = tf.convert_to_tensor(g).numpy()
    expected = np.zeros_like(X, dtype=np.float32)
    expected[[0, 2]] = -2.0
    np.testing.assert_array_equal(dense, expected)


def test_ragged_sparse_and_nested_inputs():
    rt = tf.ragged.constant([[1.0, 2.0], [3.0]])
    st = tf.sparse.from_dense(tf.constant([[0.0, 2.0], [3.0, 0.0]]))
    d = {"a": tf.constant([1.0, 2.0]), "b": (tf.constant([3.0]), [tf.constant([4.0, 5.0])])}
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([rt.flat_values, st.values, d["a"], d["b"][0], d["b"][1][0]])
        rt_y = flip_gradient(rt, 0.5)
        st_y = flip_gradient(st, 0.5)
        d_y = flip_gradient(d, 0.5)
        losses = [tf.reduce_sum(rt_y.flat_values), tf.reduce_sum(st_y.values)] + [
            tf.reduce_sum(t) for t in tf.nest.flatten(d_y)
        ]
    assert isinstance(rt_y, tf.RaggedTensor) and isinstance(st_y, tf.SparseTensor)
    np.testing.assert_array_equal(rt_y.flat_values.numpy(), rt.flat_values.numpy())
    np.testing.assert_array_equal(st_y.values.numpy(), st.values.numpy())
    assert tf.nest.map_structure(lambda t: None, d_y) == tf.nest.map_structure(lambda t: None, d)
    np.testing.assert_allclose(tape.gradient(losses[0], rt.flat_values).numpy(), -0.5)
    np.testing.assert_allclose(tape.gradient(losses[1], st.values).numpy(), -0.5)
    for leaf, loss in zip(tf.nest.flatten(d), losses[2:]):
        np.testing.assert_allclose(tape.gradient(loss, leaf).numpy(), -0.5)


def _dann_model(hp_lambda=1.0, functional=True):
    if functional:
        inp = keras.Input((3,))
        h = keras.layers.Dense(4, kernel_initializer="ones")(inp)
        r = GradientReversal(hp_lambda, name="grl")(h)
        out = keras.layers.Dense(1, kernel_initializer="ones")(r)
        return keras.Model(inp, out)
    return keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(4, kernel_initializer="ones"), GradientReversal(hp_lambda, name="grl"),
         keras.layers.Dense(1, kernel_initializer="ones")]
    )


@pytest.mark.parametrize("functional", [True, False], ids=["functional", "sequential"])
def test_keras_layer_reverses_in_models(functional):
    x = tf.constant(X, tf.float32)
    model = _dann_model(0.5, functional)
    kernel = next(l for l in model.layers if isinstance(l, keras.layers.Dense)).kernel
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    g = tape.gradient(loss, kernel)
    # d loss / d kernel[i, j] = sum_b x[b, i] * (upstream 1 * -0.5)
    np.testing.assert_allclose(g.numpy(), np.tile(-0.5 * X.sum(0)[:, None], (1, 4)), rtol=1e-5)


def test_keras_hp_lambda_setter_takes_effect_in_fit_without_retrace():
    model = _dann_model(1.0)
    grl = model.get_layer("grl")
    assert grl.hp_lambda == 1.0
    assert [w.name for w in grl.non_trainable_weights] == ["hp_lambda"] and grl.trainable_weights == []
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    x, y = X.astype(np.float32), np.zeros((4, 1), np.float32)
    model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    traced = model.train_function
    grl.hp_lambda = 0.3
    assert grl.hp_lambda == 0.3 and float(grl.non_trainable_weights[0].numpy()) == pytest.approx(0.3)
    model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    assert model.train_function is traced  # same traced function, lambda read from the weight
    # the next step sees the new lambda
    kernel = model.layers[1].kernel
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    g = tape.gradient(loss, kernel)
    with tf.GradientTape() as tape:
        grl.hp_lambda = 0.6
        loss = tf.reduce_sum(model(x))
    np.testing.assert_allclose(tape.gradient(loss, kernel).numpy(), 2 * g.numpy(), rtol=1e-5)


def test_keras_layer_under_mixed_float16_policy():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = GradientReversal(0.5)
        x = tf.constant(X, tf.float16)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(tf.cast(y, tf.float32))
        g = tape.gradient(loss, x)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert y.dtype == tf.float16 and g.dtype == tf.float16
    np.testing.assert_allclose(g.numpy().astype(np.float32), -0.5)


def test_keras_config_round_trip_keeps_exact_python_value():
    layer = GradientReversal(hp_lambda=0.1, name="g")
    assert layer.get_config()["hp_lambda"] == 0.1  # exact, not float32(0.1)
    clone = GradientReversal.from_config(layer.get_config())
    assert clone.hp_lambda == 0.1 and clone.name == "g"
    assert keras.saving.get_registered_name(GradientReversal) == "tf_grl_migrate>GradientReversal"


def test_keras_save_and_load_without_custom_objects(tmp_path):
    model = _dann_model(0.25)
    model.get_layer("grl").hp_lambda = 0.75
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    grl = loaded.get_layer("grl")
    assert isinstance(grl, GradientReversal) and grl.hp_lambda == 0.75
    x = tf.constant(X, tf.float32)
    kernel = loaded.layers[1].kernel
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(loaded(x))
    np.testing.assert_allclose(
        tape.gradient(loss, kernel).numpy(), np.tile(-0.75 * X.sum(0)[:, None], (1, 4)), rtol=1e-5
    )


def test_flip_gradient_accepts_keras_symbolic_tensors():
    inp = keras.Input((3,))
    out = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)(flip_gradient(inp, 2.0))
    model = keras.Model(inp, out)
    x = tf.constant(X, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(model(x))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), -2.0)


def test_dann_lambda_scheduler_follows_the_paper_schedule():
    model = _dann_model(0.0)
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    sched = DANNLambdaScheduler()
    x, y = np.tile(X.astype(np.float32), (5, 1)), np.zeros((20, 1), np.float32)
    model.fit(x, y, epochs=2, batch_size=4, verbose=0, callbacks=[sched])  # 5 batches x 2 epochs
    expected = [2.0 / (1.0 + math.exp(-10.0 * i / 10)) - 1.0 for i in range(10)]
    np.testing.assert_allclose(sched.history, expected)
    assert model.get_layer("grl").hp_lambda == pytest.approx(expected[-1])
    custom = DANNLambdaScheduler(gamma=5.0, lambda_max=0.5)
    assert custom.schedule(1.0) == pytest.approx(0.5 * (2 / (1 + math.exp(-5.0)) - 1))


def test_scheduler_lambda_reaches_the_gradient():
    model = _dann_model(0.0)
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")
    kernel = model.layers[1].kernel
    before = kernel.numpy().copy()
    sched = DANNLambdaScheduler(gamma=10.0, total_steps=1)  # p = 0 -> lambda = 0: no gradient to kernel 1
    model.fit(X.astype(np.float32), np.zeros((4, 1), np.float32), epochs=1, batch_size=4, verbose=0, callbacks=[sched])
    np.testing.assert_array_equal(kernel.numpy(), before)


def test_saved_model_keeps_the_reversed_gradient(tmp_path):
    class M(tf.Module):
        def __init__(self):
            self.lam = tf.Variable(0.5)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return flip_gradient(x, self.lam)

    tf.saved_model.save(M(), str(tmp_path / "sm"))
    loaded = tf.saved_model.load(str(tmp_path / "sm"))
    x = tf.constant(X, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = loaded(x)
        loss = tf.reduce_sum(y * W.astype(np.float32))
    np.testing.assert_array_equal(y.numpy(), X.astype(np.float32))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), -0.5 * W.astype(np.float32), rtol=1e-6)


def test_mirrored_strategy_gives_the_same_gradients():
    devices = [d.name for d in tf.config.list_logical_devices("CPU")][:2]
    assert len(devices) == 2, "conftest configures two logical CPUs"
    x = tf.constant(X, tf.float32)

    def run(strategy):
        with strategy.scope():
            model = _dann_model(0.5)
        kernel = model.layers[1].kernel

        @tf.function
        def step(batch):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(batch))
            return tape.gradient(loss, kernel)

        if isinstance(strategy, tf.distribute.MirroredStrategy):
            per_replica = strategy.run(step, args=(x,))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None) / strategy.num_replicas_in_sync
        return step(x)

    mirrored = run(tf.distribute.MirroredStrategy(devices))
    plain = run(tf.distribute.get_strategy())
    np.testing.assert_allclose(mirrored.numpy(), plain.numpy(), rtol=1e-6)
    np.testing.assert_allclose(plain.numpy(), np.tile(-0.5 * X.sum(0)[:, None], (1, 4)), rtol=1e-5)


def test_importing_the_package_does_not_import_tensorflow():
    code = "import sys, tf_grl_migrate, tf_grl_migrate.cli; assert 'tensorflow' not in sys.modules, 'tf imported'"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})


# -- legacy call compatibility (issue: drop-in gaps found by running legacy Keras DANN code) ------


def test_a_list_of_numbers_becomes_one_float32_tensor_as_tf_identity_made_it():
    for value in ([1.0, 2.0], (1, 2.5), [[1.0], [2.0]]):
        y = flip_gradient(value, 0.5)
        assert isinstance(y, tf.Tensor) and y.dtype == tf.float32
        np.testing.assert_array_equal(y.numpy(), np.asarray(value, np.float32))
    a, b = tf.constant([1.0]), tf.constant([2.0])
    nested = flip_gradient([a, (b,)], 0.5)  # tensors keep their structure
    assert isinstance(nested, list) and isinstance(nested[1], tuple)


@pytest.mark.parametrize("make", [tf.Variable, keras.Variable], ids=["tf.Variable", "keras.Variable"])
def test_gradient_reversal_reads_a_variable_lambda_live(make):
    """Legacy Keras DANN code: K.variable then K.set_value in a callback; never a silent copy."""
    lam = make(0.5)
    layer = GradientReversal(hp_lambda=lam)
    x = tf.constant(X)

    def eager():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
        return tape.gradient(y, x, output_gradients=tf.constant(W))

    traced = tf.function(lambda x: tf.gradients(layer(x), x, grad_ys=tf.constant(W))[0])
    np.testing.assert_allclose(eager().numpy(), -0.5 * W, rtol=1e-6)
    np.testing.assert_allclose(traced(x).numpy(), -0.5 * W, rtol=1e-6)
    lam.assign(0.9)
    np.testing.assert_allclose(eager().numpy(), -0.9 * W, rtol=1e-6)
    np.testing.assert_allclose(traced(x).numpy(), -0.9 * W, rtol=1e-6)
    assert traced.experimental_get_tracing_count() == 1
    assert layer.hp_lambda == pytest.approx(0.9) and layer.get_config()["hp_lambda"] == pytest.approx(0.9)
    layer.hp_lambda = 0.25  # the setter writes through to the user's variable
    assert float(lam.numpy()) == pytest.approx(0.25)
    np.testing.assert_allclose(eager().numpy(), -0.25 * W, rtol=1e-6)


def test_gradient_reversal_rejects_what_it_cannot_read_live():
    with pytest.raises(TypeError, match=r"scalar float tf\.Variable / keras\.Variable"):
        GradientReversal(hp_lambda="0.5x")
    with pytest.raises(TypeError, match="scalar float variable"):
        GradientReversal(hp_lambda=tf.Variable([0.5, 0.5]))


def test_reexported_builder_instance_keeps_num_calls(tmp_path):
    """--use-runtime turns the DANN builder module into the shim's builder plus an instance."""
    import harness

    from tf_grl_migrate.migrator.codemod import migrate_code

    before = (harness.CASES / "rewrite" / "dann_builder_class" / "before.py").read_text()
    path = tmp_path / "flip_gradient_reexport.py"
    path.write_text(migrate_code(before, use_runtime=True).code)
    module = harness.load(path)
    assert module.flip_gradient.num_calls == 0
    y = module.flip_gradient(tf.constant(X), 0.5)
    module.flip_gradient(tf.constant(X))
    assert module.flip_gradient.num_calls == 2
    np.testing.assert_array_equal(y.numpy(), X)


# -- tf_keras (Keras 2 on TF >= 2.16, TF_USE_LEGACY_KERAS=1): a model takes only its own Keras's layers --

def _tf_keras():
    return pytest.importorskip("tf_keras")


@pytest.mark.parametrize("functional", [True, False], ids=["functional", "sequential"])
def test_the_layer_joins_tf_keras_models_and_reverses(functional):
    tfk = _tf_keras()
    from tf_grl_migrate.runtime import keras_classes

    layer_class = keras_classes(tfk).GradientReversal
    assert isinstance(layer_class(0.5), tfk.layers.Layer)
    dense = tfk.layers.Dense(4, kernel_initializer="ones")
    if functional:
        inp = tfk.Input((3,))
        model = tfk.Model(inp, tfk.layers.Dense(1, kernel_initializer="ones")(layer_class(0.5, name="grl")(dense(inp))))
    else:
        model = tfk.Sequential([tfk.Input((3,)), dense, layer_class(0.5, name="grl"),
                                tfk.layers.Dense(1, kernel_initializer="ones")])
    x = tf.constant(X, tf.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    np.testing.assert_allclose(tape.gradient(loss, dense.kernel).numpy(), np.tile(-0.5 * X.sum(0)[:, None], (1, 4)),
                               rtol=1e-5)
    grl = model.get_layer("grl")
    clone = layer_class.from_config(grl.get_config())
    assert clone.hp_lambda == 0.5 and clone.name == "grl"
    symbolic = flip_gradient(tfk.Input((3,)), 2.0)  # a tf_keras symbolic tensor gets tf_keras's layer
    assert type(symbolic).__module__.startswith("tf_keras.")


def test_tf_keras_fit_with_the_scheduler():
    tfk = _tf_keras()
    from tf_grl_migrate.runtime import keras_classes

    classes = keras_classes(tfk)
    inp = tfk.Input((3,))
    dense = tfk.layers.Dense(4, kernel_initializer="ones")
    model = tfk.Model(inp, tfk.layers.Dense(1, kernel_initializer="ones")(classes.GradientReversal(1.0)(dense(inp))))
    model.compile(optimizer=tfk.optimizers.SGD(1.0), loss="mse")
    scheduler = classes.DANNLambdaScheduler(total_steps=1)  # p = 0: lambda 0, no gradient through the layer
    model.fit(X.astype(np.float32), np.zeros((4, 1), np.float32), batch_size=4, verbose=0, callbacks=[scheduler])
    assert scheduler.history == [0.0]
    np.testing.assert_array_equal(dense.kernel.numpy(), np.ones((3, 4)))


def test_tensorflows_legacy_keras_switch_picks_tf_keras(tmp_path):
    """With TF_USE_LEGACY_KERAS=1 (tf.keras is tf_keras), tf_grl_migrate.GradientReversal is a
    tf_keras layer: ``tf.keras.Sequential([..., GradientReversal(0.5), ...])`` builds and fits."""
    _tf_keras()
    import os
    import subprocess
    import sys

    script = tmp_path / "legacy.py"
    script.write_text(
        "import numpy as np, tensorflow as tf, tf_grl_migrate\n"
        "model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, kernel_initializer='ones'),\n"
        "                             tf_grl_migrate.GradientReversal(0.5), tf.keras.layers.Dense(1)])\n"
        "model.compile('sgd', 'mse')\n"
        "model.fit(np.ones((4, 3)), np.zeros((4, 1)), verbose=0)\n"
        "print('LAYER', type(tf_grl_migrate.GradientReversal(1.0)).__mro__[1].__module__)\n")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LAYER tf_keras." in done.stdout
