"""tf_grl_migrate: move TF1 gradient_override_map code to TF2, and a drop-in TF2 gradient reversal.

The migrator's Python API (``migrate_source``, ``migrate_paths``, see :mod:`tf_grl_migrate.api`)
never imports TensorFlow; ``import tf_grl_migrate`` imports neither TensorFlow nor libcst. The
runtime names below
(``flip_gradient``, ``FlipGradientBuilder``, ``GradientReversal``, ``DANNLambdaScheduler``,
``override_gradients``, ``gradient_override_map``, ``py_func``, ``guard``)
load :mod:`tf_grl_migrate.runtime` (or :mod:`tf_grl_migrate.runtime.override_map`), and TensorFlow with
it, on first use.
"""

__version__ = "0.1.0"

import os as _os

_RUNTIME_NAMES = frozenset(
    {
        "flip_gradient", "FlipGradientBuilder", "GradientReversal", "DANNLambdaScheduler",
        "guard", "unguard", "GradientOverrideIgnoredError", "GradientOverrideIgnoredWarning",
        "override_gradients", "gradient_override_map", "py_func",
    }
)

_API_NAMES = frozenset({"migrate_source", "migrate_paths", "MigrationResult", "Diagnostic", "FileReport"})

__all__ = sorted(_RUNTIME_NAMES | _API_NAMES | {"__version__"})


def __getattr__(name: str) -> object:
    if name in _RUNTIME_NAMES or name in _API_NAMES:
        import importlib

        module = importlib.import_module(f"{__name__}.{'api' if name in _API_NAMES else 'runtime'}")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tf_grl_migrate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _RUNTIME_NAMES | _API_NAMES)


# Opt-in: TF_GRL_MIGRATE_GUARD=raise|warn|honour turns the runtime guard on at import (this one case
# imports TensorFlow at import time, since the guard patches it).
if _os.environ.get("TF_GRL_MIGRATE_GUARD", "").strip():
    from .runtime import guard as _guard

    _guard(_os.environ["TF_GRL_MIGRATE_GUARD"].strip().lower())
