"""The migrated Keras 2 gradient reversal layer module runs under TF2's Keras with TF1's numbers.

``tests/cases/rewrite/keras_gradient_reversal_layer_module`` holds the module as widely copied
(``from keras.engine import Layer``, ``self.trainable_weights = []``, a lambda in ``K.variable``
moved by ``K.set_value``); test_differential proves ``GradientReversal(0.5).call(x)`` against
TF1's own graph. Here both migrations (inline and ``--use-runtime``) are imported and the layers
used as users use them under Keras 3: called eagerly, in a functional model, in a ``tf.function``,
through ``model.fit``, saved as config and rebuilt; the gradient is always TF1's, ``-lambda`` times
the upstream gradient. With TF_USE_LEGACY_KERAS=1 a ``tensorflow.keras`` layer module joins
tf_keras models.
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import harness  # noqa: E402

CASE = harness.CASES / "rewrite" / "keras_gradient_reversal_layer_module"
X = np.linspace(-1.0, 2.0, 12, dtype=np.float32).reshape(4, 3)
W = np.linspace(0.5, -1.5, 12, dtype=np.float32).reshape(4, 3)


@pytest.fixture(params=["after.py", "after_runtime.py"], ids=["inline", "use-runtime"])
def module(request):
    return harness.load(CASE / request.param)


def _gradient(layer_or_fn, x=X):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer_or_fn(x)
        loss = tf.reduce_sum(y * W)
    return y.numpy(), tape.gradient(loss, x).numpy()


def test_the_layers_reverse_eagerly_and_in_tf_function(module):
    for layer, scale in ((module.GradientReversal(0.5), 0.5), (module.ScheduledReversal(2.0), 2.0)):
        y, g = _gradient(layer)
        np.testing.assert_array_equal(y, X)
        np.testing.assert_allclose(g, -scale * W, rtol=1e-6)
        y, g = tf.function(lambda x, layer=layer: _gradient_in_graph(layer, x))(tf.constant(X))
        np.testing.assert_array_equal(y.numpy(), X)
        np.testing.assert_allclose(g.numpy(), -scale * W, rtol=1e-6)


def _gradient_in_graph(layer, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(y * W)
    return y, tape.gradient(loss, x)


def test_a_functional_model_trains_with_the_reversed_gradient(module):
    """Dense -> GradientReversal(0.5) -> loss: fit moves the Dense kernel up the loss, by half."""
    inputs = keras.Input((3,))
    dense = keras.layers.Dense(3, kernel_initializer="ones", use_bias=False)
    model = keras.Model(inputs, module.GradientReversal(0.5, name="grl")(dense(inputs)))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(X) * W)
    np.testing.assert_allclose(tape.gradient(loss, dense.kernel).numpy(), -0.5 * X.T @ W, rtol=1e-5)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    target = np.zeros((4, 3), np.float32)
    plain = keras.Model(inputs, dense(inputs))
    before = dense.kernel.numpy().copy()
    with tf.GradientTape() as tape:
        mse = tf.reduce_mean(tf.square(plain(X) - target))
    step = -0.1 * (-0.5) * tape.gradient(mse, dense.kernel).numpy()  # SGD on the reversed gradient
    model.fit(X, target, batch_size=4, epochs=1, verbose=0)
    np.testing.assert_allclose(dense.kernel.numpy(), before + step, rtol=1e-5)


def test_config_round_trips_and_set_value_moves_the_lambda(module):
    layer = module.GradientReversal(0.5, name="grl")
    clone = module.GradientReversal.from_config(layer.get_config())
    assert clone.hp_lambda == 0.5 and clone.name == "grl"
    scheduled = module.ScheduledReversal(2.0)
    scheduled.set_hp_lambda(0.25)  # K.set_value, as a DANN callback does
    np.testing.assert_allclose(_gradient(scheduled)[1], -0.25 * W, rtol=1e-6)
    assert module.ScheduledReversal.from_config(scheduled.get_config()).get_config()["hp_lambda"] == 0.25
    assert scheduled.trainable_weights == []


def test_a_tensorflow_keras_layer_module_joins_tf_keras_models_under_the_legacy_switch(tmp_path):
    """``from tensorflow.keras.engine import Layer`` becomes ``tensorflow.keras.layers``: with
    TF_USE_LEGACY_KERAS=1 that is tf_keras, and the migrated layer joins tf.keras models."""
    pytest.importorskip("tf_keras")
    from tf_grl_migrate.migrator.codemod import migrate_code

    source = (CASE / "before.py").read_text().replace("from keras.engine import Layer",
                                                      "from tensorflow.keras.engine import Layer")
    source = source.replace("from keras import backend as K", "from tensorflow.keras import backend as K")
    migrated = migrate_code(source).code
    assert "from tensorflow.keras.layers import Layer\n" in migrated
    (tmp_path / "grl.py").write_text(migrated)
    (tmp_path / "use.py").write_text(
        "import numpy as np, tensorflow as tf, grl\n"
        "x = tf.constant(np.ones((2, 3), np.float32))\n"
        "model = tf.keras.Sequential([tf.keras.Input((3,)), grl.GradientReversal(0.5)])\n"
        "with tf.GradientTape() as tape:\n"
        "    tape.watch(x)\n"
        "    loss = tf.reduce_sum(model(x))\n"
        "print('GRAD', tape.gradient(loss, x).numpy().ravel().tolist())\n"
        "print('LAYER', type(grl.GradientReversal(1.0)).__mro__[1].__module__)\n")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(tmp_path))
    done = subprocess.run([sys.executable, str(tmp_path / "use.py")], capture_output=True, text=True, env=env,
                          timeout=300, cwd=str(pathlib.Path(tmp_path)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "GRAD [-0.5, -0.5, -0.5, -0.5, -0.5, -0.5]" in done.stdout
    assert "LAYER tf_keras." in done.stdout
