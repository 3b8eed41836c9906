import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")  # tests never use a GPU


def pytest_configure(config):
    # The MirroredStrategy test needs two logical CPUs, which can only be configured before
    # TensorFlow initialises its devices; do it once for the whole (shared) test process.
    try:
        import tensorflow as tf
    except ImportError:
        return
    cpus = tf.config.list_physical_devices("CPU")
    try:
        tf.config.set_logical_device_configuration(
            cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
        )
    except RuntimeError:
        pass


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory, monkeypatch):
    """Each test starts with an empty result cache of its own (never the user's ~/.cache), so no
    test is answered from what another one computed; subprocesses inherit it."""
    monkeypatch.setenv("TF_GRL_MIGRATE_CACHE_DIR", str(tmp_path_factory.mktemp("result-cache")))
