"""Subprocess: compute TF1 reference results for case directories, under TF1 semantics.

    python tf1_runner.py OUT.npz CASE_DIR [CASE_DIR ...]

``sys.modules["tensorflow"]`` is replaced by ``tensorflow.compat.v1`` with eager execution
disabled, so the legacy files run as they did under TensorFlow 1 (gradient_override_map works);
names removed in TF 1.0 (``tf.neg``) are provided as what TF's 1.0 upgrade script renamed them to.
A case that raises is recorded as an error, not fatal to the others.
"""

import os
import pathlib
import sys
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

import numpy as np
import tensorflow.compat.v1 as tf1

tf1.disable_eager_execution()
sys.modules["tensorflow"] = tf1
sys.path.insert(0, str(pathlib.Path(__file__).parent))


def _provide_pre_1_0_names():
    """Pre-1.0 files (``tf.neg``) run as they did, and Keras 2's ``keras.engine``: the verifier's own
    TF1 setting (one engine)."""
    import keras.backend  # noqa: F401  (Keras 2's session and variable helpers go on it)
    import tensorflow as real_tf

    from tf_grl_migrate.verifier.tf1 import keras_as_tf1_had_it, provide_keras_2_engine, provide_pre_1_0_names

    provide_pre_1_0_names(tf1, real_tf)
    provide_keras_2_engine()
    keras_as_tf1_had_it(real_tf)


_provide_pre_1_0_names()

import harness  # noqa: E402


def main(out, case_dirs):
    results = {}
    for case_dir in map(pathlib.Path, case_dirs):
        try:
            y, grads = harness.run_tf1(case_dir)
            results[f"{case_dir.name}/y"] = y
            for i, g in enumerate(grads):
                results[f"{case_dir.name}/g{i}"] = g
        except Exception:  # noqa: BLE001 - any error of the TF1 reference is that case's answer
            results[f"{case_dir.name}/error"] = np.array(traceback.format_exc())
    np.savez(out, **results)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
