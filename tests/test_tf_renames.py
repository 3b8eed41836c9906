"""The generated table of aliases TensorFlow 1.0 removed (tf_grl_migrate/_tf_renames.py)."""

import json
import pathlib
import subprocess
import sys

import harness
import pytest

tf = pytest.importorskip("tensorflow")

from tf_grl_migrate import _tf_renames, ops  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_table_is_what_the_generator_writes_for_the_pinned_tensorflow():
    assert _tf_renames.TF_VERSION == tf.__version__
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
