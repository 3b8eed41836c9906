import ast
import importlib.util
import os
import pathlib

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")  # tests never use a GPU

# The TF-free part of the suite (the migrator: libcst and click only) also runs where TensorFlow
# and numpy are not installed (.ci/run: the lowest and newest Python the package allows). There,
# test modules that import them at the top are not collected, and a test that imports them as it
# runs is skipped, saying so.
_TF_STACK = ("tensorflow", "keras", "numpy")
HAS_TF_STACK = all(importlib.util.find_spec(name) is not None for name in _TF_STACK)


def _imports_tf_stack(path: pathlib.Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return bool(names & {*_TF_STACK, "harness"})


collect_ignore = [] if HAS_TF_STACK else [
    p.name for p in pathlib.Path(__file__).parent.glob("*.py") if p.name != "conftest.py" and _imports_tf_stack(p)]


def _needs_tf_stack(exc) -> bool:
    return (not HAS_TF_STACK and isinstance(exc, ModuleNotFoundError)
            and (exc.name or "").split(".")[0] in (*_TF_STACK, "harness"))


def _skipped_without_tf_stack():
    try:
        return (yield)
    except ModuleNotFoundError as exc:
        if _needs_tf_stack(exc):
            pytest.skip(f"needs {exc.name} (the TF-free run)")
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _skipped_without_tf_stack())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _skipped_without_tf_stack())


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
