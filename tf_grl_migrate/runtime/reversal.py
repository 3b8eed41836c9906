"""TF2 gradient reversal with the legacy DANN call signatures: ``flip_gradient``,
``FlipGradientBuilder``, the Keras layer ``GradientReversal`` and ``DANNLambdaScheduler``.

Forward: the identity, bit for bit. Backward: ``dL/dx = -l * dL/dy``.
Works eagerly, inside ``tf.function`` (``jit_compile`` too), in legacy ``tf.compat.v1``
graph mode, under ``tf.distribute``, through ``tf.saved_model``, with second-order tapes.
"""

from __future__ import annotations

import functools
import math
import sys
import threading
import types
from collections.abc import Callable
from typing import Any, Union

try:
    import tensorflow as tf
except ImportError as exc:  # pragma: no cover - exercised only without TensorFlow
    raise ImportError(
        "tf_grl_migrate's runtime (flip_gradient, FlipGradientBuilder, GradientReversal) "
        "needs TensorFlow 2. Install your build of it, e.g. `pip install tensorflow` or "
        "`pip install 'tf-grl-migrate[tensorflow]'`. The migrator CLI does not need it."
    ) from exc

import keras

__all__ = ["DANNLambdaScheduler", "FlipGradientBuilder", "GradientReversal", "flip_gradient", "keras_classes"]

_EagerTensor = type(tf.constant(0.0))
Lambda = Union[float, tf.Tensor, tf.Variable]  # a reversal's scale: a number, a scalar tensor or variable


def _scale_gradient(dy: tf.Tensor | tf.IndexedSlices, scale: tf.Tensor) -> tf.Tensor | tf.IndexedSlices:
    """``dy * -scale`` in dy's dtype (negation is exact); IndexedSlices stay sparse."""
    if isinstance(dy, tf.IndexedSlices):
        values = dy.values * -tf.cast(scale, dy.values.dtype)
        return tf.IndexedSlices(values, dy.indices, dy.dense_shape)
    return dy * -tf.cast(scale, dy.dtype)


@tf.custom_gradient
def _reverse(x: tf.Tensor, scale: tf.Tensor) -> tuple[tf.Tensor, Callable[[tf.Tensor], tuple[Any, None]]]:
    # Both arguments are plain tensors: a tf.Variable read inside a custom_gradient
    # function would make TensorFlow demand a `variables` argument in `grad`.
    def grad(dy: tf.Tensor) -> tuple[Any, None]:
        return _scale_gradient(dy, scale), None

    return tf.identity(x), grad


def _check_dtype(x: tf.Tensor) -> None:
    dtype = x.dtype
    if not (dtype.is_floating or dtype.is_complex):
        raise TypeError(
            f"flip_gradient needs a floating-point tensor, got dtype {dtype.name}: "
            "gradients do not flow through integer, bool or string tensors, so reversing "
            "them would silently do nothing. Cast the input to a float dtype first."
        )


def _scale(l: Lambda) -> tf.Tensor:
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


def _flip_leaf(x: Any, scale: tf.Tensor) -> Any:
    if isinstance(x, tf.RaggedTensor):
        return x.with_flat_values(_flip_leaf(x.flat_values, scale))
    if isinstance(x, tf.SparseTensor):
        return tf.SparseTensor(x.indices, _flip_leaf(x.values, scale), x.dense_shape)
    x = tf.convert_to_tensor(x)
    _check_dtype(x)
    return _reverse(x, scale)


def _keras_of_symbolic(x: object) -> types.ModuleType | None:
    """The Keras package whose symbolic tensor ``x`` is (``keras.Input``'s), or None."""
    if isinstance(x, keras.KerasTensor):
        return keras
    legacy = sys.modules.get("tf_keras")
    if legacy is not None and type(x).__name__ == "KerasTensor" and type(x).__module__.startswith("tf_keras."):
        return legacy
    return None


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_variable(value: object) -> bool:
    return isinstance(value, (tf.Variable, keras.Variable))


def flip_gradient(x: Any, l: Lambda = 1.0) -> Any:
    """Gradient reversal: returns ``x`` unchanged; its gradient is multiplied by ``-l``.

    Args:
      x: a float tensor, a ``tf.Variable``, a ``tf.RaggedTensor`` or ``tf.SparseTensor``
        (values reversed), a Keras symbolic tensor (``keras.Input``), or a nested
        dict/list/tuple of those (reversed leaf by leaf). A list or tuple of Python numbers
        becomes one tensor, as ``tf.identity`` made it in the legacy function.
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
    leaves = tf.nest.flatten(x)
    if isinstance(x, (list, tuple)) and leaves and all(_is_number(t) for t in leaves):
        # the legacy function called tf.identity(x): a list of numbers became one tensor (float32)
        x = tf.convert_to_tensor(x)
    elif any(_keras_of_symbolic(t) is not None for t in leaves):
        owner = next(_keras_of_symbolic(t) for t in leaves if _keras_of_symbolic(t) is not None)
        if isinstance(l, tf.Variable):
            raise TypeError(
                "flip_gradient on Keras symbolic tensors needs a Python number as lambda; "
                "to drive lambda during training use the GradientReversal layer and its "
                "hp_lambda property (or DANNLambdaScheduler)."
            )
        return keras_classes(owner).GradientReversal(hp_lambda=float(l))(x)
    scale = _scale(l)
    return tf.nest.map_structure(lambda leaf: _flip_leaf(leaf, scale), x)


_COUNTER_LOCK = threading.Lock()  # FlipGradientBuilder.num_calls, counted from replica threads at once


class FlipGradientBuilder:
    """The DANN ``FlipGradientBuilder``: ``flip = FlipGradientBuilder(); y = flip(x, l)``.

    Same signature and ``num_calls`` counter as the TF1 original, TF2 semantics. The counter
    counts every call, also those made at once by ``tf.distribute``'s replica threads (one per
    replica, as TF1's did).
    """

    def __init__(self) -> None:
        self.num_calls = 0

    def __call__(self, x: Any, l: Lambda = 1.0) -> Any:
        y = flip_gradient(x, l)
        with _COUNTER_LOCK:
            self.num_calls += 1
        return y


def _tf_keras() -> types.ModuleType:
    """The Keras that ``tf.keras`` is: tf_keras where TensorFlow's own switch asks for it
    (``TF_USE_LEGACY_KERAS=1``, how Keras-2 code runs on TF >= 2.16), else Keras 3."""
    layer = tf.keras.layers.Layer
    if layer.__module__.startswith("tf_keras."):
        import tf_keras

        return tf_keras
    return keras


@functools.cache
def keras_classes(package: types.ModuleType) -> types.SimpleNamespace:
    """``GradientReversal`` and ``DANNLambdaScheduler`` for one Keras package (``keras``, Keras 3, or
    ``tf_keras``): a Keras model takes only layers and callbacks of its own Keras.
    ``tf_grl_migrate.GradientReversal`` is the one of the Keras ``tf.keras`` is; a process using
    both asks here for the other: ``keras_classes(tf_keras).GradientReversal``."""
    three = package is keras

    Layer: Any = package.layers.Layer
    Callback: Any = package.callbacks.Callback

    @package.saving.register_keras_serializable(package="tf_grl_migrate")
    class GradientReversal(Layer):
        """Keras layer: identity forward, gradient times ``-hp_lambda`` backward.

        ``hp_lambda`` lives in a non-trainable float32 weight, so ``layer.hp_lambda = 0.3``
        between steps takes effect on the next step of an already traced train function
        (a Python float attribute would be baked into the trace and silently ignored).

        ``hp_lambda`` may also be a scalar ``tf.Variable`` / ``keras.Variable`` (how legacy Keras DANN
        code drives it: ``K.variable`` then ``K.set_value`` in a callback): it is read live at every
        call, never copied, so ``v.assign(0.9)`` changes the next gradient. ``get_config`` saves its
        value at that moment.
        """

        def __init__(self, hp_lambda: float | tf.Variable = 1.0, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.supports_masking = True
            self._live, self._hp_lambda_value = _live_and_value(hp_lambda)
            self._hp_lambda = self.add_weight(
                name="hp_lambda", shape=(), dtype="float32", trainable=False,
                initializer=package.initializers.Constant(float(self._hp_lambda_value)),
                **({"autocast": False} if three else {}))

        @property
        def hp_lambda(self) -> float:
            return _current_lambda(self)

        @hp_lambda.setter
        def hp_lambda(self, value: float) -> None:
            _set_lambda(self, value)

        def call(self, inputs: Any) -> Any:
            return flip_gradient(inputs, _scale_tensor(self))

        def compute_output_shape(self, input_shape: Any) -> Any:
            return input_shape

        def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
            return mask

        def get_config(self) -> dict[str, Any]:
            config = super().get_config()
            config["hp_lambda"] = self.hp_lambda
            return config

    class DANNLambdaScheduler(Callback):
        """Drives every ``GradientReversal`` layer of the model with the DANN schedule.

        ``lambda = lambda_max * (2 / (1 + exp(-gamma * p)) - 1)``, ``p`` the training progress in
        [0, 1] counted in batches over the whole ``fit`` (``p = batch_index / total_batches``).
        ``total_steps`` overrides the count Keras gives (needed when the data has no known length).
        """

        def __init__(self, gamma: float = 10.0, lambda_max: float = 1.0, total_steps: int | None = None) -> None:
            super().__init__()
            self.gamma = float(gamma)
            self.lambda_max = float(lambda_max)
            self.total_steps = total_steps
            self.history: list[float] = []
            self._step = 0
            self._total = 1  # set on train begin
            self._layers: list[GradientReversal] = []

        def schedule(self, p: float) -> float:
            return self.lambda_max * (2.0 / (1.0 + math.exp(-self.gamma * p)) - 1.0)

        def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
            self._total = _total_batches(self.total_steps, self.params)
            self._step = 0
            self._layers = [
                layer for layer in self.model._flatten_layers(include_self=False)
                if isinstance(layer, GradientReversal)
            ]
            if not self._layers:
                raise ValueError("DANNLambdaScheduler: the model has no GradientReversal layer")

        def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            p = min(self._step / self._total, 1.0)
            value = self.schedule(p)
            for layer in self._layers:
                layer.hp_lambda = value
            self.history.append(value)
            self._step += 1

    for cls in (GradientReversal, DANNLambdaScheduler):
        cls.__module__, cls.__qualname__ = __name__, cls.__name__
    return types.SimpleNamespace(GradientReversal=GradientReversal, DANNLambdaScheduler=DANNLambdaScheduler)


def _live_and_value(hp_lambda: Any) -> tuple[tf.Variable | None, float]:
    """(the variable read live, or None; the Python number it holds now) of a GradientReversal's
    ``hp_lambda``: a scalar float variable, or a number."""
    if not _is_variable(hp_lambda):
        return None, _python_scalar(hp_lambda)
    if tuple(hp_lambda.shape) != () or not tf.as_dtype(hp_lambda.dtype).is_floating:
        raise TypeError(f"hp_lambda must be a scalar float variable, got shape "
                        f"{tuple(hp_lambda.shape)} and dtype {tf.as_dtype(hp_lambda.dtype).name}")
    return hp_lambda, _python_scalar(float(hp_lambda.numpy()))


def _current_lambda(layer: Any) -> float:
    """A GradientReversal's ``hp_lambda`` now: the live variable's value, else its weight's (loaded
    weights win over the value last set)."""
    if layer._live is not None:
        return float(layer._live.numpy())
    stored = float(layer._hp_lambda.numpy())
    if float(tf.constant(layer._hp_lambda_value, tf.float32).numpy()) != stored:
        layer._hp_lambda_value = stored
    return layer._hp_lambda_value


def _set_lambda(layer: Any, value: float) -> None:
    """Set a GradientReversal's ``hp_lambda`` (and the variable it reads live, if one)."""
    value = _python_scalar(value)
    if layer._live is not None:
        layer._live.assign(float(value))
    layer._hp_lambda.assign(float(value))
    layer._hp_lambda_value = value


def _scale_tensor(layer: Any) -> tf.Tensor | tf.Variable:
    """What a GradientReversal's call scales the gradient by: its weight, or the variable read live."""
    scale = layer._hp_lambda if layer._live is None else layer._live
    return scale.value if isinstance(scale, keras.Variable) else scale


def _total_batches(total_steps: int | None, params: dict[str, Any]) -> int:
    """The batches a fit runs: ``total_steps``, else steps per epoch times epochs as Keras says."""
    total = total_steps
    if total is None:
        steps, epochs = params.get("steps"), params.get("epochs")
        if not steps or not epochs:
            raise ValueError(
                "DANNLambdaScheduler cannot tell how many batches fit will run; "
                "pass steps_per_epoch to fit or total_steps to the scheduler."
            )
        total = steps * epochs
    return max(int(total), 1)


def _python_scalar(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"hp_lambda must be a Python number or a scalar float tf.Variable / keras.Variable "
                            f"(read live), got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"hp_lambda must be finite, got {value!r}")
    return value


GradientReversal = keras_classes(_tf_keras()).GradientReversal
DANNLambdaScheduler = keras_classes(_tf_keras()).DANNLambdaScheduler
