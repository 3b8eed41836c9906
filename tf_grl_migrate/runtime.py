"""TF2 gradient reversal with the legacy DANN call signatures.

This is the only module of the package that imports TensorFlow; ``tf_grl_migrate``
imports it lazily, on first use of one of its names.

Forward: the identity, bit for bit. Backward: ``dL/dx = -l * dL/dy``.
Works eagerly, inside ``tf.function`` (``jit_compile`` too), in legacy ``tf.compat.v1``
graph mode, under ``tf.distribute``, through ``tf.saved_model``, with second-order tapes.
"""

from __future__ import annotations

import math

try:
    import tensorflow as tf
except ImportError as exc:  # pragma: no cover - exercised only without TensorFlow
    raise ImportError(
        "tf_grl_migrate's runtime (flip_gradient, FlipGradientBuilder, GradientReversal) "
        "needs TensorFlow 2. Install your build of it, e.g. `pip install tensorflow` or "
        "`pip install 'tf-grl-migrate[tensorflow]'`. The migrator CLI does not need it."
    ) from exc

import keras

__all__ = [
    "flip_gradient", "FlipGradientBuilder", "GradientReversal", "DANNLambdaScheduler", "guard", "unguard",
    "GradientOverrideIgnoredError", "GradientOverrideIgnoredWarning",
]

_EagerTensor = type(tf.constant(0.0))


def _scale_gradient(dy, scale):
    """``dy * -scale`` in dy's dtype (negation is exact); IndexedSlices stay sparse."""
    if isinstance(dy, tf.IndexedSlices):
        values = dy.values * -tf.cast(scale, dy.values.dtype)
        return tf.IndexedSlices(values, dy.indices, dy.dense_shape)
    return dy * -tf.cast(scale, dy.dtype)


@tf.custom_gradient
def _reverse(x, scale):
    # Both arguments are plain tensors: a tf.Variable read inside a custom_gradient
    # function would make TensorFlow demand a `variables` argument in `grad`.
    def grad(dy):
        return _scale_gradient(dy, scale), None

    return tf.identity(x), grad


def _check_dtype(x):
    dtype = x.dtype
    if not (dtype.is_floating or dtype.is_complex):
        raise TypeError(
            f"flip_gradient needs a floating-point tensor, got dtype {dtype.name}: "
            "gradients do not flow through integer, bool or string tensors, so reversing "
            "them would silently do nothing. Cast the input to a float dtype first."
        )


def _scale(l):
    """l as a scalar tensor, read now (a tf.Variable is read at call time, never baked in)."""
    if isinstance(l, (int, float)) and not isinstance(l, bool):
        return tf.constant(float(l), dtype=tf.float64)
    if isinstance(l, bool):
        raise TypeError("flip_gradient's lambda must be a number or a scalar float tensor, got a bool")
    scale = tf.convert_to_tensor(l)
    if not (scale.dtype.is_floating or scale.dtype.is_integer):
        raise TypeError(f"flip_gradient's lambda must be numeric, got dtype {scale.dtype.name}")
    if scale.shape.rank is not None and scale.shape.rank != 0:
        raise ValueError(f"flip_gradient's lambda must be a scalar, got shape {scale.shape}")
    if scale.dtype.is_integer:
        scale = tf.cast(scale, tf.float64)
    return scale


def _flip_leaf(x, scale):
    if isinstance(x, tf.RaggedTensor):
        return x.with_flat_values(_flip_leaf(x.flat_values, scale))
    if isinstance(x, tf.SparseTensor):
        return tf.SparseTensor(x.indices, _flip_leaf(x.values, scale), x.dense_shape)
    x = tf.convert_to_tensor(x)
    _check_dtype(x)
    return _reverse(x, scale)


def _is_keras_symbolic(x):
    return isinstance(x, keras.KerasTensor)


def flip_gradient(x, l=1.0):
    """Gradient reversal: returns ``x`` unchanged; its gradient is multiplied by ``-l``.

    Args:
      x: a float tensor, a ``tf.Variable``, a ``tf.RaggedTensor`` or ``tf.SparseTensor``
        (values reversed), a Keras symbolic tensor (``keras.Input``), or a nested
        dict/list/tuple of those (reversed leaf by leaf).
      l: the scale: a Python number, a scalar tensor or a scalar ``tf.Variable``.
        A variable is read each time the function runs, so assigning it between
        training steps changes the gradient without retracing a ``tf.function``.

    Raises:
      TypeError: for integer, bool or string inputs (their gradient would be silently
        ``None``), or a non-numeric lambda.
      ValueError: for a lambda that is not a scalar.
    """
    # Fast paths: the common eager calls, one dense float tensor and a Python float or a
    # scalar variable (read now, so a later assign is seen by the next call).
    if type(x) is _EagerTensor and x.dtype.is_floating:
        if type(l) is float:
            return _reverse(x, tf.constant(l, dtype=x.dtype))
        if isinstance(l, tf.Variable) and l.shape.rank == 0 and l.dtype.is_floating:
            return _reverse(x, l.value())
    if any(_is_keras_symbolic(t) for t in tf.nest.flatten(x)):
        if isinstance(l, tf.Variable):
            raise TypeError(
                "flip_gradient on Keras symbolic tensors needs a Python number as lambda; "
                "to drive lambda during training use the GradientReversal layer and its "
                "hp_lambda property (or DANNLambdaScheduler)."
            )
        return GradientReversal(hp_lambda=float(l))(x)
    scale = _scale(l)
    return tf.nest.map_structure(lambda leaf: _flip_leaf(leaf, scale), x)


class FlipGradientBuilder:
    """The DANN ``FlipGradientBuilder``: ``flip = FlipGradientBuilder(); y = flip(x, l)``.

    Same signature and ``num_calls`` counter as the TF1 original, TF2 semantics.
    """

    def __init__(self):
        self.num_calls = 0

    def __call__(self, x, l=1.0):
        y = flip_gradient(x, l)
        self.num_calls += 1
        return y


@keras.saving.register_keras_serializable(package="tf_grl_migrate")
class GradientReversal(keras.layers.Layer):
    """Keras layer: identity forward, gradient times ``-hp_lambda`` backward.

    ``hp_lambda`` lives in a non-trainable float32 weight, so ``layer.hp_lambda = 0.3``
    between steps takes effect on the next step of an already traced train function
    (a Python float attribute would be baked into the trace and silently ignored).
    """

    def __init__(self, hp_lambda=1.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self._hp_lambda_value = _python_scalar(hp_lambda)
        self._hp_lambda = self.add_weight(
            name="hp_lambda",
            shape=(),
            dtype="float32",
            trainable=False,
            autocast=False,
            initializer=keras.initializers.Constant(float(self._hp_lambda_value)),
        )

    @property
    def hp_lambda(self):
        return self._hp_lambda_value

    @hp_lambda.setter
    def hp_lambda(self, value):
        value = _python_scalar(value)
        self._hp_lambda.assign(float(value))
        self._hp_lambda_value = value

    def call(self, inputs):
        return flip_gradient(inputs, self._hp_lambda.value)

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config["hp_lambda"] = self._hp_lambda_value
        return config

    def load_own_variables(self, store):
        super().load_own_variables(store)
        self._hp_lambda_value = float(self._hp_lambda.numpy())


def _python_scalar(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"hp_lambda must be a Python number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"hp_lambda must be finite, got {value!r}")
    return value


class DANNLambdaScheduler(keras.callbacks.Callback):
    """Drives every ``GradientReversal`` layer of the model with the DANN schedule.

    ``lambda = lambda_max * (2 / (1 + exp(-gamma * p)) - 1)``, ``p`` the training progress in
    [0, 1] counted in batches over the whole ``fit`` (``p = batch_index / total_batches``).
    ``total_steps`` overrides the count Keras gives (needed when the data has no known length).
    """

    def __init__(self, gamma=10.0, lambda_max=1.0, total_steps=None):
        super().__init__()
        self.gamma = float(gamma)
        self.lambda_max = float(lambda_max)
        self.total_steps = total_steps
        self.history = []
        self._step = 0
        self._total = None
        self._layers = []

    def schedule(self, p):
        return self.lambda_max * (2.0 / (1.0 + math.exp(-self.gamma * p)) - 1.0)

    def on_train_begin(self, logs=None):
        total = self.total_steps
        if total is None:
            steps, epochs = self.params.get("steps"), self.params.get("epochs")
            if not steps or not epochs:
                raise ValueError(
                    "DANNLambdaScheduler cannot tell how many batches fit will run; "
                    "pass steps_per_epoch to fit or total_steps to the scheduler."
                )
            total = steps * epochs
        self._total = max(int(total), 1)
        self._step = 0
        self._layers = [
            layer for layer in self.model._flatten_layers(include_self=False)
            if isinstance(layer, GradientReversal)
        ]
        if not self._layers:
            raise ValueError("DANNLambdaScheduler: the model has no GradientReversal layer")

    def on_train_batch_begin(self, batch, logs=None):
        p = min(self._step / self._total, 1.0)
        value = self.schedule(p)
        for layer in self._layers:
            layer.hp_lambda = value
        self.history.append(value)
        self._step += 1


# -- the runtime guard -------------------------------------------------------------------------

class GradientOverrideIgnoredError(RuntimeError):
    """gradient_override_map used where TensorFlow 2 ignores it."""


class GradientOverrideIgnoredWarning(UserWarning):
    """gradient_override_map used where TensorFlow 2 ignores it."""


_GUARD = {"original": None, "action": None}
_INTERNAL_PREFIXES = ("tensorflow.", "keras.", "tf_keras.", "tensorflow_probability.")


def _ignored_because(graph):
    """Why TF2 will ignore an override map entered on ``graph`` now, or None where it works."""
    from tensorflow.python.framework.func_graph import FuncGraph

    if tf.executing_eagerly():
        return "under eager execution, where it is always ignored"
    if isinstance(graph, FuncGraph):
        return "inside a tf.function graph, where tf.GradientTape ignores it"
    return None  # legacy graph mode (tf.compat.v1 graph + Session): the map still works


def _user_location(frame):
    """File and line of the user's code; inside tf.function, autograph runs a generated copy of the
    function, so name the original file and the first line of the original function instead."""
    path, line = frame.f_code.co_filename, frame.f_lineno
    if "__autograph_generated" in path:
        path = frame.f_globals.get("__file__", path)
        name = frame.f_code.co_name
        original = frame.f_globals.get(name[4:] if name.startswith("tf__") else name)
        code = getattr(original, "__code__", None)
        if code is not None:
            path, line = code.co_filename, code.co_firstlineno
    return path, line


def guard(action="raise"):
    """Make ``Graph.gradient_override_map`` fail loudly where TensorFlow 2 ignores it.

    ``action`` is ``"raise"`` (a :class:`GradientOverrideIgnoredError`) or ``"warn"`` (a
    :class:`GradientOverrideIgnoredWarning`). It fires under eager execution and inside
    ``tf.function`` graphs (there only ``tf.gradients`` would honour the map, and TF2 code takes
    gradients with ``tf.GradientTape``), never in legacy ``tf.compat.v1`` graph mode where the map
    works, and never for TensorFlow's or Keras's own calls (``tf.custom_gradient`` enters the map
    inside ``tf.function`` graphs). Calling it again only changes the action; :func:`unguard`
    restores TensorFlow's method. Also enabled at ``import tf_grl_migrate`` by the environment
    variable ``TF_GRL_MIGRATE_GUARD=raise`` (or ``warn``).
    """
    import functools
    import sys
    import warnings

    from tensorflow.python.framework import ops as tf_ops

    if action not in ("raise", "warn"):
        raise ValueError(f"guard action must be 'raise' or 'warn', got {action!r}")
    _GUARD["action"] = action
    if _GUARD["original"] is not None:
        return
    original = tf_ops.Graph.gradient_override_map

    @functools.wraps(original)
    def gradient_override_map(self, op_type_map):
        caller = sys._getframe(1)
        module = caller.f_globals.get("__name__", "")
        reason = None if module.startswith(_INTERNAL_PREFIXES) else _ignored_because(self)
        if reason is not None:
            path, line = _user_location(caller)
            message = (
                f"{path}:{line}: gradient_override_map({op_type_map!r}) is used {reason}; TensorFlow 2 "
                f"computes the ordinary gradients instead of the overridden ones, silently. Run "
                f"`tf-grl-migrate {path}` to rewrite it to tf.custom_gradient."
            )
            if _GUARD["action"] == "raise":
                raise GradientOverrideIgnoredError(message)
            warnings.warn_explicit(message, GradientOverrideIgnoredWarning, path, line, module=module)
        return original(self, op_type_map)

    _GUARD["original"] = original
    tf_ops.Graph.gradient_override_map = gradient_override_map


def unguard():
    """Undo :func:`guard` (a no-op when it is not active)."""
    from tensorflow.python.framework import ops as tf_ops

    if _GUARD["original"] is not None:
        tf_ops.Graph.gradient_override_map = _GUARD["original"]
        _GUARD["original"] = _GUARD["action"] = None
