"""tf_grl_migrate: move TF1 gradient_override_map code to TF2, and a drop-in TF2 gradient reversal.

``import tf_grl_migrate`` never imports TensorFlow. The runtime names below
(``flip_gradient``, ``FlipGradientBuilder``, ``GradientReversal``, ``DANNLambdaScheduler``)
load :mod:`tf_grl_migrate.runtime`, and TensorFlow with it, on first use.
"""

__version__ = "0.1.0"

_RUNTIME_NAMES = frozenset({"flip_gradient", "FlipGradientBuilder", "GradientReversal", "DANNLambdaScheduler"})

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
