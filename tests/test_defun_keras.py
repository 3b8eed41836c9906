"""A Keras model built on a Defun straight-through sign, as users met it: under TF2 the legacy
module's Defun gradient is dropped in ``fit`` (the layers below the sign stay frozen, no error);
after migration ``fit`` moves them by exactly the straight-through gradient TF1 gave."""

import importlib.util

import numpy as np
import pytest
import tensorflow as tf

from tf_grl_migrate.migrator.codemod import migrate_code

LEGACY = '''\
import tensorflow as tf
from tensorflow.python.framework import function


@function.Defun(tf.float32, python_grad_func=lambda op, dy: dy, shape_func=lambda op: [op.inputs[0].get_shape()])
def binarize(x):
    return tf.sign(x)
'''


def _module(tmp_path, name, code):
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _model(sign):
    tf.keras.utils.set_random_seed(3)
    return tf.keras.Sequential([
        tf.keras.Input((4,)),
        tf.keras.layers.Dense(5, name="lower"),
        tf.keras.layers.Lambda(sign),
        tf.keras.layers.Dense(1, name="upper"),
    ])


def _lower_kernel_after_one_step(sign):
    model = _model(sign)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    x = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(8, 4)
    y = np.arange(8, dtype=np.float32).reshape(8, 1)
    before = model.get_layer("lower").kernel.numpy().copy()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    return before, model.get_layer("lower").kernel.numpy()


def test_keras_fit_on_a_migrated_defun_sign_trains_the_lower_layers_as_tf1(tmp_path):
    result = migrate_code(LEGACY)
    assert "@tf.custom_gradient" in result.code and "Defun" not in result.code.split("import function")[1]
    legacy = _module(tmp_path, "legacy_sign", LEGACY)
    migrated = _module(tmp_path, "migrated_sign", result.code)

    # the legacy Defun under TF2: fit runs, the gradient through the sign is dropped, nothing moves
    frozen_before, frozen_after = _lower_kernel_after_one_step(legacy.binarize)
    np.testing.assert_array_equal(frozen_after, frozen_before)

    # the migration: the lower layer moves by TF1's straight-through gradient
    start, moved = _lower_kernel_after_one_step(migrated.binarize)
    reference_start, reference = _lower_kernel_after_one_step(lambda x: x + tf.stop_gradient(tf.sign(x) - x))
    np.testing.assert_array_equal(start, reference_start)
    assert np.abs(moved - start).max() > 1e-3
    np.testing.assert_allclose(moved, reference, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_the_migrated_defun_gives_tf1s_gradient_on_a_second_call_too(tmp_path, mode):
    migrated = _module(tmp_path, "migrated_sign_twice", migrate_code(LEGACY).code)

    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(migrated.binarize(x) * tf.range(1.0, 5.0))
        return tape.gradient(y, x)

    run = tf.function(grad) if mode == "function" else grad
    for scale in (1.0, -2.0):  # a Defun was traced once per signature; the port must not depend on it
        got = run(tf.constant([0.5, -0.25, 3.0, -1.0]) * scale)
        np.testing.assert_array_equal(got.numpy(), [1.0, 2.0, 3.0, 4.0])
