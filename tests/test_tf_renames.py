"""The generated table of aliases TensorFlow 1.0 removed (tf_grl_migrate/knowledge/_tf_renames.py)."""

import json
import pathlib
import subprocess
import sys

import harness
import pytest

tf = pytest.importorskip("tensorflow")

from tf_grl_migrate.knowledge import _tf_renames, ops  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_table_is_what_the_generator_writes_for_the_pinned_tensorflow():
    assert tf.__version__ == _tf_renames.TF_VERSION
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_tf_renames.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


TF1_0 = json.loads((ROOT / "tools" / "tf_1_0_symbol_renames.json").read_text())["symbol_renames"]


@pytest.mark.parametrize("old", sorted(_tf_renames.RENAMED))
def test_each_name_written_is_the_object_tf1_meant(old):
    """`tf.neg` -> `tf.negative`: the very object TF 1.x had under the name TF 1.0 gave it."""
    assert harness.resolve_tf("tensorflow." + _tf_renames.RENAMED[old]) is harness.resolve_tf(
        "tensorflow.compat.v1." + TF1_0["tf." + old][3:])


@pytest.mark.parametrize("old", sorted(_tf_renames.GONE))
def test_names_without_a_tf2_object_are_marked_gone(old):
    with pytest.raises(AttributeError):
        harness.resolve_tf("tensorflow.compat.v1." + TF1_0["tf." + old][3:])


def test_the_renamed_arithmetic_is_recognised_as_a_reversal():
    assert "tensorflow.neg" in ops.NEGATIVE and "tensorflow.mul" in ops.MULTIPLY
    assert ops.removed_alias({"tensorflow.compat.v1.neg"}) == ("neg", "negative")
    assert ops.removed_alias({"tensorflow.batch_band_part"}) == ("batch_band_part", None)
    assert ops.removed_alias({"tensorflow.negative"}) is None


def test_keyword_changes_come_from_tf_upgrade_v2s_tables():
    from tf_grl_migrate.knowledge import _tf_renames, ops

    assert _tf_renames.KEYWORDS["reduce_mean"] == {"keep_dims": "keepdims", "reduction_indices": "axis"}
    assert ops.keyword_changes({"tensorflow.reduce_mean"}, 1, ["keep_dims"]) == ({"keep_dims": "keepdims"}, None)
    # TF1's tf.argmax(input, axis, name): a third positional argument is `name=` in TF2's order
    assert ops.keyword_changes({"tensorflow.argmax"}, 3, []) == ({2: "name"}, None)
    changes, why = ops.keyword_changes({"tensorflow.cond"}, 3, ["strict"])
    assert changes == {} and "strict" in why
    # a spelling TF2 keeps as TF1 had it (tf.compat.v1) is no business of this table's
    assert ops.keyword_changes({"numpy.mean"}, 1, ["keepdims"]) == ({}, None)


def test_keyword_renamed_in_moved_gradient_code_runs_under_tf2():
    import tensorflow as tf

    from tf_grl_migrate import migrate_source

    code = ("import tensorflow as tf\n\n@tf.RegisterGradient('KD')\ndef _kd(op, grad):\n"
            "    return grad / tf.reduce_max(tf.abs(grad), [1], keep_dims=True)\n\n"
            "def f(x):\n    g = tf.get_default_graph()\n    with g.gradient_override_map({'Identity': 'KD'}):\n"
            "        return tf.identity(x)\n")
    new = migrate_source(code).code
    assert "keepdims=True" in new and "keep_dims" not in new
    ns: dict = {}
    exec(compile(new, "<migrated>", "exec"), ns)
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = ns["f"](x)
    assert tape.gradient(y, x).shape == (2, 2)
