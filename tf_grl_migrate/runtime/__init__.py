"""The runtime: what users import at training time, TF2 code with TF1's meaning. It imports
TensorFlow (``tf_grl_migrate`` loads it lazily, on first use of one of its names; the migrator
never does).

- ``reversal.py``: ``flip_gradient``, ``FlipGradientBuilder``, the Keras layer
  ``GradientReversal`` and ``DANNLambdaScheduler`` (for Keras 3 and tf_keras: ``keras_classes``);
- ``override_map.py``: ``gradient_override_map`` with TF1's meaning (ops created in the block),
  and ``py_func`` with a gradient;
- ``override_gradients.py``: the older recipe, a map applied where gradients are computed;
- ``guard.py``: ``guard`` / ``unguard``, legacy maps made loud (or honoured) where TF2 ignores them.
"""

from .guard import GradientOverrideIgnoredError, GradientOverrideIgnoredWarning, guard, unguard
from .override_gradients import override_gradients
from .override_map import gradient_override_map, py_func
from .reversal import DANNLambdaScheduler, FlipGradientBuilder, GradientReversal, flip_gradient, keras_classes

__all__ = [
    "DANNLambdaScheduler", "FlipGradientBuilder", "GradientOverrideIgnoredError", "GradientOverrideIgnoredWarning",
    "GradientReversal", "flip_gradient", "gradient_override_map", "guard", "keras_classes", "override_gradients",
    "py_func", "unguard",
]
