"""tf_grl_migrate: move TF1 gradient_override_map code to TF2, and a drop-in TF2 gradient reversal.

``import tf_grl_migrate`` never imports TensorFlow. The runtime names below
(``flip_gradient``, ``FlipGradientBuilder``, ``GradientReversal``, ``DANNLambdaScheduler``,
``override_gradients``, ``guard``)
load :mod:`tf_grl_migrate.runtime`, and TensorFlow with it, on first use.
"""

__version__ = "0.1.0"

import os as _os

_RUNTIME_NAMES = frozenset(
    {
        "flip_gradient", "FlipGradientBuilder", "GradientReversal", "DANNLambdaScheduler",
        "guard", "unguard", "GradientOverrideIgnoredError", "GradientOverrideIgnoredWarning",
        "override_gradients",
    }
)

__all__ = sorted(_RUNTIME_NAMES | {"__version__"})


def __getattr__(name):
    if name in _RUNTIME_NAMES:
        from . import runtime

        value = getattr(runtime, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tf_grl_migrate' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _RUNTIME_NAMES)


# Opt-in: TF_GRL_MIGRATE_GUARD=raise|warn turns the runtime guard on at import (this one case
# imports TensorFlow at import time, since the guard patches it).
if _os.environ.get("TF_GRL_MIGRATE_GUARD", "").strip():
    from .runtime import guard as _guard

    _guard(_os.environ["TF_GRL_MIGRATE_GUARD"].strip().lower())
