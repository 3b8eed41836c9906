"""The opt-in runtime guard against real TensorFlow: eager, tf.function, legacy graph mode."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import tf_grl_migrate  # noqa: E402
from tf_grl_migrate import GradientOverrideIgnoredError, GradientOverrideIgnoredWarning, guard, unguard  # noqa: E402


def legacy_flip(x):
    g = tf.compat.v1.get_default_graph()
    with g.gradient_override_map({"Identity": "FlipGuardTest"}):  # line named in the message
        return tf.identity(x)


@pytest.fixture
def guarded():
    guard()
    yield
    unguard()


def test_eager_use_raises_naming_file_and_line(guarded):
    with pytest.raises(GradientOverrideIgnoredError) as info:
        legacy_flip(tf.constant([1.0]))
    message = str(info.value)
    assert f"{__file__}:" in message and "eager" in message and "tf-grl-migrate" in message


def test_tf_function_use_raises(guarded):
    # autograph re-raises it wrapped in its own error type; the message is ours and names the source
    with pytest.raises(Exception, match="GradientOverrideIgnoredError") as info:
        tf.function(legacy_flip)(tf.constant([1.0]))
    assert "inside a tf.function graph" in str(info.value)
    assert f"{__file__}:{legacy_flip.__code__.co_firstlineno}:" in str(info.value)


def test_warn_mode_warns_and_runs_on(guarded):
    guard("warn")
    with pytest.warns(GradientOverrideIgnoredWarning, match="eager"):
        y = legacy_flip(tf.constant([2.0]))
    assert y.numpy().tolist() == [2.0]


def test_legacy_graph_mode_stays_silent(guarded):
    @tf.RegisterGradient("FlipGuardLegacy")
    def _flip(op, grad):
        return [-grad]

    with tf.Graph().as_default() as g:
        x = tf.constant([3.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with g.gradient_override_map({"Identity": "FlipGuardLegacy"}):
                y = tf.identity(x)
        (grad,) = tf.compat.v1.gradients(y, x)
        with tf.compat.v1.Session() as sess:
            assert sess.run(grad).tolist() == [-1.0]  # the map still works there


def test_tensorflow_internal_uses_never_trigger(guarded):
    @tf.custom_gradient
    def double_grad(x):
        return tf.identity(x), lambda dy: 2 * dy

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf_grl_migrate.flip_gradient(double_grad(x), 0.5)  # custom_gradient enters the map here
        return tape.gradient(y, x)

    np.testing.assert_allclose(step(tf.constant([1.0])).numpy(), [-1.0])


def test_guard_is_idempotent_and_can_be_undone():
    from tensorflow.python.framework import ops

    original = ops.Graph.gradient_override_map
    guard()
    patched = ops.Graph.gradient_override_map
    guard()
    assert ops.Graph.gradient_override_map is patched
    unguard()
    unguard()
    assert ops.Graph.gradient_override_map is original
    legacy_flip(tf.constant([1.0]))  # silently ignored again, as in plain TF2
    with pytest.raises(ValueError):
        guard("explode")


def test_environment_variable_enables_it_at_import(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(
        "import tensorflow as tf\nimport tf_grl_migrate\n"
        "with tf.compat.v1.get_default_graph().gradient_override_map({'Identity': 'X'}):\n"
        "    tf.identity(tf.constant(1.0))\n"
    )
    env = {**os.environ, "TF_GRL_MIGRATE_GUARD": "raise", "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "GradientOverrideIgnoredError" in out.stderr and f"{script}:3" in out.stderr
