"""gradient_override_map: TF1's map with TF1's meaning under TF2 (ops created in the block).

Every expected gradient is TF1's own: the same computation with the same weights built in a
``tf.Graph``, entered with TensorFlow's real ``graph.gradient_override_map`` and differentiated
with ``tf.compat.v1.gradients`` in a Session, compared with TF2 under the runtime map: eagerly, in
a ``tf.function`` with the tape inside and outside, and with the gradient taken after the block.
"""

import threading

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from tensorflow.python.framework import ops as tf_ops  # noqa: E402

from tf_grl_migrate import gradient_override_map  # noqa: E402

RNG = np.random.default_rng(11)
X = RNG.uniform(-2.0, 2.0, size=(4, 6)).astype(np.float32)


def _upstream(shape):
    n = int(np.prod(shape))
    return np.linspace(-1.5, 2.0, n, dtype=np.float32).reshape(shape)


def _register(name, function):
    if name not in tf_ops._gradient_registry._registry:
        tf.RegisterGradient(name)(function)


def _guided(op, grad):  # the most copied guided ReLU: it reads op.inputs[0]
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.inputs[0] > 0.0, grad.dtype)


def _deconv(op, grad):  # deconvnet: the gradient's own sign only
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad))


_register("MapGuidedRelu", _guided)
_register("MapDeconvRelu", _deconv)
_register("MapFlip", lambda op, grad: [-0.5 * grad])
_register("MapClipInputs", lambda op, grad: grad * tf.cast(tf.abs(op.inputs[0]) <= 1.0, grad.dtype))


def _model():
    """Seeded weights: with some draws no negative gradient reaches an active ReLU, and the guided
    gradient is the ordinary one (the tests check that the override changed something)."""
    model = keras.Sequential([
        keras.layers.Dense(7, activation="relu", kernel_initializer=keras.initializers.GlorotUniform(seed=3)),
        keras.layers.Dense(5, activation="relu", kernel_initializer=keras.initializers.GlorotUniform(seed=4)),
    ])
    model(X)
    return model


MODEL = _model()
WEIGHTS = [v.numpy() for v in MODEL.weights]


def _tf1(mapping, build):
    """TF1's answer: ``build`` in a tf.Graph under the graph's own map, tf.compat.v1.gradients."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X)
        with graph.gradient_override_map(mapping):
            y = build(x, graph=True)
        loss = tf.reduce_sum(y * tf.constant(_upstream(y.shape.as_list())))
        grad = tf.compat.v1.gradients(loss, x)[0]
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run(grad)


def _dense_net(x, graph=False):
    if graph:  # the same weights, as TF1 ops
        h = tf.nn.relu(tf.matmul(x, WEIGHTS[0]) + WEIGHTS[1])
        return tf.nn.relu(tf.matmul(h, WEIGHTS[2]) + WEIGHTS[3])
    return MODEL(x)


def _loss(y):
    return tf.reduce_sum(y * tf.constant(_upstream(y.shape.as_list())))


def _eager(mapping, build, after_block=False):
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with gradient_override_map(mapping):
            y = build(x)
            if not after_block:
                loss = _loss(y)
        if after_block:
            loss = _loss(y)
    return tape.gradient(loss, x).numpy()


def _tape_inside_function(mapping, build):
    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            with gradient_override_map(mapping):
                y = build(x)
            loss = _loss(y)
        return tape.gradient(loss, x)

    return step(tf.constant(X)).numpy()


def _tape_outside_function(mapping, build):
    forward = tf.function(lambda x: _in_block(mapping, build, x))
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = _loss(forward(x))
    return tape.gradient(loss, x).numpy()


def _in_block(mapping, build, x):
    with gradient_override_map(mapping):
        return build(x)


def _gradients_in_function(mapping, build):
    @tf.function
    def step(x):
        with gradient_override_map(mapping):
            y = build(x)
        return tf.gradients(_loss(y), x)[0]

    return step(tf.constant(X)).numpy()


MODES = {"eager": _eager, "eager, gradient after the block": lambda m, b: _eager(m, b, after_block=True),
         "tf.function, tape inside": _tape_inside_function, "tf.function, tape outside": _tape_outside_function,
         "tf.function, tf.gradients": _gradients_in_function}
SHAPES = {
    "guided ReLU through a Keras model": ({"Relu": "MapGuidedRelu"}, _dense_net),
    "deconvnet ReLU through a Keras model": ({"Relu": "MapDeconvRelu"}, _dense_net),
    "straight-through Sign": ({"Sign": "Identity"}, lambda x, graph=False: tf.sign(x)),
    "a gradient reading op.inputs": ({"Sign": "MapClipInputs"}, lambda x, graph=False: tf.sign(x)),
    "reversal on Identity": ({"Identity": "MapFlip"}, lambda x, graph=False: tf.identity(x) * 1.0),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_map_gives_tf1s_gradient(shape, mode):
    mapping, build = SHAPES[shape]
    expected = _tf1(mapping, build)
    got = MODES[mode](mapping, build)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    ordinary = _eager({}, build)  # and the override did something
    assert not np.allclose(ordinary, expected), shape


def test_a_function_value_receives_an_op_with_inputs_outputs_type_and_attrs():
    seen = {}

    def gradient(op, grad):
        seen.update(type=op.type, T=op.get_attr("T"), inputs=len(op.inputs), outputs=len(op.outputs))
        return [grad * 3.0]

    got = _eager({"Relu": gradient}, lambda x, graph=False: tf.nn.relu(x))
    np.testing.assert_allclose(got, 3.0 * _upstream(X.shape))
    assert seen == {"type": "Relu", "T": tf.float32, "inputs": 1, "outputs": 1}


def test_ops_made_before_or_after_the_block_keep_their_gradient():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        before = tf.sign(x) * 1.0
        with gradient_override_map({"Sign": "Identity"}):
            inside = tf.sign(x)
        after = tf.sign(x)
        loss = tf.reduce_sum(before + 2.0 * inside + 4.0 * after)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.full(X.shape, 2.0))


def test_blocks_nest_and_the_inner_map_wins_for_its_types():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with gradient_override_map({"Identity": "MapFlip", "Sign": "Identity"}):
            with gradient_override_map({"Identity": lambda op, grad: [grad * 10.0]}):
                inner = tf.identity(x)
            outer = tf.identity(x)
            sign = tf.sign(x)
        loss = tf.reduce_sum(inner + outer + sign)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.full(X.shape, 10.0 - 0.5 + 1.0))


def test_the_block_is_undone_when_it_raises_and_by_hand():
    x = tf.constant(X)
    with pytest.raises(ZeroDivisionError), gradient_override_map({"Sign": "Identity"}):
        raise ZeroDivisionError("raised in the block")
    ctx = gradient_override_map({"Sign": "Identity"})
    ctx.__enter__()
    with tf.GradientTape() as tape:
        tape.watch(x)
        inside = tf.sign(x)
    ctx.__exit__(None, None, None)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        outside = tf.sign(x)
    np.testing.assert_allclose(tape.gradient(inside, x).numpy(), np.ones(X.shape))
    np.testing.assert_allclose(tape2.gradient(outside, x).numpy(), np.zeros(X.shape))


def test_another_thread_is_not_affected():
    x = tf.constant(X)
    results = {}
    entered, done = threading.Event(), threading.Event()

    def other():
        entered.wait(30)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sign(x)
        results["other"] = tape.gradient(y, x).numpy()
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with gradient_override_map({"Sign": "Identity"}):
        entered.set()
        done.wait(30)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sign(x)
        results["mine"] = tape.gradient(y, x).numpy()
    thread.join(30)
    np.testing.assert_allclose(results["other"], np.zeros(X.shape))
    np.testing.assert_allclose(results["mine"], np.ones(X.shape))


def test_a_stop_recording_of_the_users_own_is_kept():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with gradient_override_map({"Sign": "Identity"}):
            with tape.stop_recording():
                hidden = tf.sign(x)
            seen = tf.sign(x)
        loss = tf.reduce_sum(hidden + seen)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.ones(X.shape))


@pytest.mark.parametrize("mapping, error", [
    ({"relu": "MapGuidedRelu"}, ValueError),  # not an op type
    ({"Relu": "NoSuchGradientRegistered"}, ValueError),
    ({"Relu": 3}, TypeError),
    (["Relu"], TypeError),
])
def test_bad_keys_or_values_raise_before_anything_changes(mapping, error):
    x = tf.constant(X)
    with pytest.raises(error), gradient_override_map(mapping):
        pass
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.relu(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), (X > 0).astype(np.float32))


def test_legacy_graph_mode_is_tensorflows_own_map():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X)
        with gradient_override_map({"Identity": "MapFlip"}):
            y = tf.identity(x)
        assert y.op.get_attr("_gradient_op_type") == b"MapFlip"
        with tf.compat.v1.Session() as session:
            grad = session.run(tf.compat.v1.gradients(y, x)[0])
    np.testing.assert_allclose(grad, np.full(X.shape, -0.5))


def test_graph_passed_by_the_migrator_matters_only_in_a_legacy_graph():
    """``graph=`` (the receiver the migrated code named): TF's own map on it in a tf.compat.v1
    graph; eagerly and in a tf.function (a graph taken eagerly, entered while tracing) the map
    still applies to the ops created in the block."""
    outer = tf.compat.v1.get_default_graph()

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            with gradient_override_map({"Identity": "MapFlip"}, graph=outer):
                y = tf.identity(x)
        return tape.gradient(y, x)

    np.testing.assert_allclose(step(tf.constant(X)).numpy(), np.full(X.shape, -0.5))
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X)
        with gradient_override_map({"Identity": "MapFlip"}, graph=graph):
            y = tf.identity(x)
        assert y.op.get_attr("_gradient_op_type") == b"MapFlip"


def test_a_py_func_map_entered_eagerly_says_why_it_cannot_apply():
    """Eagerly, tf.compat.v1.py_func runs its function directly: no PyFunc op exists to map, so
    the map raises instead of leaving the ordinary (no) gradient silently."""
    with pytest.raises(ValueError, match="never created eagerly"), gradient_override_map({"PyFunc": "MapFlip"}):
        pass


def test_an_op_feature_the_runtime_lacks_is_named_in_the_error():
    def gradient(op, grad):
        return [grad * (2.0 if "scaled" in op.node_def.name else 1.0)]

    with pytest.raises(AttributeError, match="offers inputs, outputs, type, name, get_attr and graph"):
        _eager({"Relu": gradient}, lambda x, graph=False: tf.nn.relu(x))


def test_an_op_recorded_by_tensorflows_python_path_is_mapped_too():
    """Eager ops whose inputs need converting run TensorFlow's Python path, which records the op
    after its callbacks (the fast path records it before): both must give the mapped gradient."""
    from tensorflow.python.eager import context
    from tensorflow.python.ops import gen_math_ops

    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with gradient_override_map({"Sign": "Identity"}):
            y = gen_math_ops.sign_eager_fallback(x, name=None, ctx=context.context())
            z = tf.sign(x)
        loss = tf.reduce_sum(3.0 * y + z)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.full(X.shape, 4.0))


def test_guard_honour_gives_legacy_calls_tf1s_meaning():
    """A legacy file, unchanged, with one line at program start: its own
    ``tf.compat.v1.get_default_graph().gradient_override_map`` gets TF1's meaning under TF2."""
    from tf_grl_migrate import guard, unguard

    def legacy_model(x):
        g = tf.compat.v1.get_default_graph()
        with g.gradient_override_map({"Relu": "MapGuidedRelu"}):
            return _dense_net(x)

    expected = _tf1({"Relu": "MapGuidedRelu"}, _dense_net)
    guard("honour")
    try:
        np.testing.assert_allclose(_eager({}, legacy_model), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_tape_inside_function({}, legacy_model), expected, rtol=1e-5, atol=1e-6)
    finally:
        unguard()
    assert not np.allclose(_eager({}, legacy_model), expected)  # unguarded: TF2 ignores the legacy map


def test_py_func_with_a_gradient_is_tf1s_recipe():
    """tf_grl_migrate.py_func: tf.numpy_function under tf.custom_gradient, grad(op, *dys) with op.inputs
    and op.outputs; TF1's own recipe in a tf.compat.v1 graph; no gradient where TF1's map missed the
    op type made (stateful=False makes PyFuncStateless)."""
    from tf_grl_migrate import py_func

    def grad(op, dy):
        assert op.type == "PyFunc" and len(op.outputs) == 1
        return dy * 2.0 * op.inputs[0]

    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = py_func(np.square, [x], tf.float32, grad=grad, override_types=("PyFunc",))
        missed = py_func(np.square, [x], tf.float32, stateful=False, grad=grad, override_types=("PyFunc",))
    np.testing.assert_allclose(y.numpy(), X * X)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2.0 * X, rtol=1e-6)
    assert tape.gradient(missed, x) is None
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X)
        y = py_func(np.square, [x], tf.float32, grad=grad, override_types=("PyFunc",))
        assert y.op.type == "PyFunc" and y.op.get_attr("_gradient_op_type").startswith(b"tf_grl_migrate_gradient_")
        with tf.compat.v1.Session() as session:
            got = session.run(tf.compat.v1.gradients(y, x)[0])
    np.testing.assert_allclose(got, 2.0 * X, rtol=1e-6)


def test_a_variable_made_in_an_identity_map_raises_instead_of_differing_from_tf1():
    """TF1 read a variable through an Identity op (`w/read`) the map overrode; TF2 has none to
    override: the block says so instead of silently giving the weights another gradient."""
    with pytest.raises(ValueError, match="w/read"), gradient_override_map({"Identity": "MapFlip"}):
        tf.Variable(tf.ones([2]))
    with gradient_override_map({"Relu": "MapGuidedRelu"}):  # other maps: variables are fine
        v = tf.Variable(tf.ones([2]))
        tf.nn.relu(v)
    assert v.shape == (2,)


def test_a_model_built_in_the_block_but_called_after_it_raises():
    """TF1 made a Keras model's ops when it was built; TF2 makes them when it is called. A block that
    built a model (variables made) but made no op of a mapped type would silently change nothing:
    it raises when it ends, saying to call the model inside the block."""
    with pytest.raises(RuntimeError, match="Call the model inside the block"), gradient_override_map(
            {"Relu": "MapGuidedRelu"}):
        model = keras.Sequential([keras.layers.Dense(7, activation="relu")])
        model.build((None, 6))  # built, to be called later, outside the block
    assert model(X).shape == (4, 7)
    x = tf.constant(X)
    with pytest.raises(RuntimeError, match="a model was built"), gradient_override_map({"Relu": "MapGuidedRelu"}):
        dense = keras.layers.Dense(3, activation="sigmoid")  # no Relu in it at all
        dense(x)
    with tf.GradientTape() as tape:  # built and called inside: fine, and guided
        tape.watch(x)
        with gradient_override_map({"Relu": "MapGuidedRelu"}):
            y = keras.layers.Dense(5, activation="relu")(x)
    assert tape.gradient(y, x) is not None


def _half_sum(op, grad):
    return [grad * 0.5, grad * 0.5]


def _sum_with_double(x, graph=False):
    return x + x * 2.0  # `+`: an AddV2 op since TF 1.15, an Add op before


@pytest.mark.parametrize("mode", ["eager", "tf.function, tape inside"])
def test_a_map_naming_an_op_type_tensorflow_has_since_versioned_says_so(mode):
    """`a + b` made an Add op before TF 1.15 and makes AddV2 since: a map naming Add applies to
    nothing, as in TF's own graph map here, which is said (a RuntimeWarning when the block ends),
    not silent; a map naming AddV2 applies, as TF's does, and says nothing."""
    import warnings

    _register("MapHalfSum", _half_sum)
    for key in ("Add", "AddV2"):
        expected = _tf1({key: "MapHalfSum"}, _sum_with_double)
        if key == "Add":
            with pytest.warns(RuntimeWarning, match="made 'AddV2' ops but no 'Add' op.*Map 'AddV2'"):
                got = MODES[mode]({key: "MapHalfSum"}, _sum_with_double)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = MODES[mode]({key: "MapHalfSum"}, _sum_with_double)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert not np.allclose(_tf1({"Add": "MapHalfSum"}, _sum_with_double),
                           _tf1({"AddV2": "MapHalfSum"}, _sum_with_double))  # the entry matters


def test_a_tf_function_traced_in_an_eager_block_keeps_tf1s_gradient_on_every_call():
    """A ``tf.function`` first called (so traced) inside a block entered eagerly: its ops were made
    in the block, so TF1's meaning holds on that call and every later call of the trace; the
    identities ``tf.function`` adds to hand back its outputs are TensorFlow's, never mapped."""
    mapping = {"Identity": "MapFlip"}

    def build(x, graph=False):
        return tf.identity(x * 3.0)

    expected = _tf1(mapping, build)
    assert not np.allclose(expected, _eager({}, build))
    traced = tf.function(build)
    x = tf.constant(X)
    got = []
    for call in range(3):
        with tf.GradientTape() as tape:
            tape.watch(x)
            if call == 0:
                with gradient_override_map(mapping):
                    y = traced(x)
            else:
                y = traced(x)
            loss = _loss(y)
        got.append(tape.gradient(loss, x))
    for grad in got:
        assert grad is not None
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-6)
    untaped = tf.function(build)  # traced in the block with no tape active, differentiated later
    with gradient_override_map(mapping):
        untaped(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = _loss(untaped(x))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_leaving_a_block_never_entered_says_so():
    block = gradient_override_map({"Relu": "MapGuidedRelu"})
    with pytest.raises(RuntimeError, match="never entered"):
        block.__exit__(None, None, None)
    with block:
        pass
    with pytest.raises(RuntimeError, match="never entered"):
        block.__exit__(None, None, None)


XS = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)


def _square_grad(op, dy):
    return [dy * 2.0 * op.inputs[0]]


def _square_grad_by_py_func(op, dy):  # a gradient that itself calls py_func(...)[0], as TF1 code did
    return [tf.compat.v1.py_func(lambda a, d: (2.0 * a * d).astype(np.float32), [op.inputs[0], dy],
                                 [tf.float32])[0]]


def _loss_xs(y):  # py_func's output has no static shape in a TF1 graph
    return tf.reduce_sum(y * tf.constant(_upstream(list(XS.shape))))


_register("MapSquareGrad", _square_grad)
_register("MapSquareGradByPyFunc", _square_grad_by_py_func)


def _py_func_tf1(gradient_name):
    """TF1's recipe in a tf.Graph: py_func with a one-element Tout list under the graph's own map."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(XS)
        with graph.gradient_override_map({"PyFunc": gradient_name}):
            y = tf.compat.v1.py_func(np.square, [x], [tf.float32])[0]
        grad = tf.compat.v1.gradients(_loss_xs(y), x)[0]
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run([y, grad])


@pytest.mark.parametrize("gradient", [_square_grad, _square_grad_by_py_func], ids=["plain", "py_func in the gradient"])
@pytest.mark.parametrize("mode", ["eager", "tf.function"])
def test_py_func_with_a_one_element_tout_list_gives_tf1s_values(gradient, mode):
    """The most copied recipe, ``py_func(func, [x], [tf.float32], grad=...)[0]``: TF1 returned a list
    for a list ``Tout``, so ``[0]`` is the whole output, in every mode (eagerly ``tf.numpy_function``
    returns a bare tensor, where ``[0]`` would take a row); a gradient function that itself calls
    ``py_func(...)[0]`` runs in a graph, as TF1 ran it."""
    from tf_grl_migrate import py_func

    name = "MapSquareGrad" if gradient is _square_grad else "MapSquareGradByPyFunc"
    y1, g1 = _py_func_tf1(name)

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = py_func(np.square, [x], [tf.float32], grad=gradient)
            y = out[0]
            loss = _loss_xs(y)
        return out, y, tape.gradient(loss, x)

    out, y, grad = (tf.function(step) if mode == "tf.function" else step)(tf.constant(XS))
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_array_equal(y.numpy(), y1)
    np.testing.assert_allclose(grad.numpy(), g1, rtol=1e-6)
    single = py_func(np.square, [tf.constant(XS)], tf.float32)  # one dtype, not a list: a tensor
    assert not isinstance(single, list)


def test_a_mapped_gradient_calling_py_func_runs_in_a_graph_as_tf1_ran_it():
    expected = _tf1({"Square": "MapSquareGradByPyFunc"}, lambda x, graph=False: tf.square(x))
    got = _eager({"Square": "MapSquareGradByPyFunc"}, lambda x, graph=False: tf.square(x))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
