"""TF2 gradient reversal with the legacy DANN call signatures.

It imports TensorFlow, as ``override_map.py`` (the runtime ``gradient_override_map``, whose
``call_as_tf1`` it borrows) and the verifier's worker processes do; ``tf_grl_migrate`` imports
these lazily, on first use of one of their names.

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
    "GradientOverrideIgnoredError", "GradientOverrideIgnoredWarning", "override_gradients", "keras_classes",
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


def _keras_of_symbolic(x):
    """The Keras package whose symbolic tensor ``x`` is (``keras.Input``'s), or None."""
    if isinstance(x, keras.KerasTensor):
        return keras
    legacy = sys.modules.get("tf_keras")
    if legacy is not None and type(x).__name__ == "KerasTensor" and type(x).__module__.startswith("tf_keras."):
        return legacy
    return None


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_variable(value):
    return isinstance(value, (tf.Variable, keras.Variable))


def flip_gradient(x, l=1.0):
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
        owner = [_keras_of_symbolic(t) for t in leaves if _keras_of_symbolic(t) is not None][0]
        if isinstance(l, tf.Variable):
            raise TypeError(
                "flip_gradient on Keras symbolic tensors needs a Python number as lambda; "
                "to drive lambda during training use the GradientReversal layer and its "
                "hp_lambda property (or DANNLambdaScheduler)."
            )
        return keras_classes(owner).GradientReversal(hp_lambda=float(l))(x)
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


def _tf_keras():
    """The Keras that ``tf.keras`` is: tf_keras where TensorFlow's own switch asks for it
    (``TF_USE_LEGACY_KERAS=1``, how Keras-2 code runs on TF >= 2.16), else Keras 3."""
    layer = tf.keras.layers.Layer
    if layer.__module__.startswith("tf_keras."):
        import tf_keras

        return tf_keras
    return keras


@functools.lru_cache(maxsize=None)
def keras_classes(package):
    """``GradientReversal`` and ``DANNLambdaScheduler`` for one Keras package (``keras``, Keras 3, or
    ``tf_keras``): a Keras model takes only layers and callbacks of its own Keras.
    ``tf_grl_migrate.GradientReversal`` is the one of the Keras ``tf.keras`` is; a process using
    both asks here for the other: ``keras_classes(tf_keras).GradientReversal``."""
    three = package is keras

    @package.saving.register_keras_serializable(package="tf_grl_migrate")
    class GradientReversal(package.layers.Layer):
        """Keras layer: identity forward, gradient times ``-hp_lambda`` backward.

        ``hp_lambda`` lives in a non-trainable float32 weight, so ``layer.hp_lambda = 0.3``
        between steps takes effect on the next step of an already traced train function
        (a Python float attribute would be baked into the trace and silently ignored).

        ``hp_lambda`` may also be a scalar ``tf.Variable`` / ``keras.Variable`` (how legacy Keras DANN
        code drives it: ``K.variable`` then ``K.set_value`` in a callback): it is read live at every
        call, never copied, so ``v.assign(0.9)`` changes the next gradient. ``get_config`` saves its
        value at that moment.
        """

        def __init__(self, hp_lambda=1.0, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True
            self._live = None
            if _is_variable(hp_lambda):
                if tuple(hp_lambda.shape) != () or not tf.as_dtype(hp_lambda.dtype).is_floating:
                    raise TypeError(f"hp_lambda must be a scalar float variable, got shape "
                                    f"{tuple(hp_lambda.shape)} and dtype {tf.as_dtype(hp_lambda.dtype).name}")
                self._live, hp_lambda = hp_lambda, float(hp_lambda.numpy())
            self._hp_lambda_value = _python_scalar(hp_lambda)
            self._hp_lambda = self.add_weight(
                name="hp_lambda", shape=(), dtype="float32", trainable=False,
                initializer=package.initializers.Constant(float(self._hp_lambda_value)),
                **({"autocast": False} if three else {}))

        @property
        def hp_lambda(self):
            if self._live is not None:
                return float(self._live.numpy())
            stored = float(self._hp_lambda.numpy())  # loaded weights win over the value last set
            if float(tf.constant(self._hp_lambda_value, tf.float32).numpy()) != stored:
                self._hp_lambda_value = stored
            return self._hp_lambda_value

        @hp_lambda.setter
        def hp_lambda(self, value):
            value = _python_scalar(value)
            if self._live is not None:
                self._live.assign(float(value))
            self._hp_lambda.assign(float(value))
            self._hp_lambda_value = value

        def call(self, inputs):
            scale = self._hp_lambda if self._live is None else self._live
            return flip_gradient(inputs, scale.value if isinstance(scale, keras.Variable) else scale)

        def compute_output_shape(self, input_shape):
            return input_shape

        def compute_mask(self, inputs, mask=None):
            return mask

        def get_config(self):
            config = super().get_config()
            config["hp_lambda"] = self.hp_lambda
            return config

    class DANNLambdaScheduler(package.callbacks.Callback):
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

    for cls in (GradientReversal, DANNLambdaScheduler):
        cls.__module__, cls.__qualname__ = __name__, cls.__name__
    return types.SimpleNamespace(GradientReversal=GradientReversal, DANNLambdaScheduler=DANNLambdaScheduler)


def _python_scalar(value):
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

    ``action`` is ``"raise"`` (a :class:`GradientOverrideIgnoredError`), ``"warn"`` (a
    :class:`GradientOverrideIgnoredWarning`) or ``"honour"``: the legacy call gets TF1's meaning
    instead, through :class:`tf_grl_migrate.gradient_override_map` (ops created in the block use
    the mapped gradient), so a legacy file runs unchanged. It fires under eager execution and inside
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

    if action not in ("raise", "warn", "honour"):
        raise ValueError(f"guard action must be 'raise', 'warn' or 'honour', got {action!r}")
    _GUARD["action"] = action
    if _GUARD["original"] is not None:
        return
    original = tf_ops.Graph.gradient_override_map

    @functools.wraps(original)
    def gradient_override_map(self, op_type_map):
        caller = sys._getframe(1)
        module = caller.f_globals.get("__name__", "")
        reason = None if module.startswith(_INTERNAL_PREFIXES) else _ignored_because(self)
        if reason is not None and _GUARD["action"] == "honour":
            from .override_map import gradient_override_map as honoured

            return honoured(op_type_map, graph=self)
        if reason is not None:
            path, line = _user_location(caller)
            message = (
                f"{path}:{line}: gradient_override_map({op_type_map!r}) is used {reason}; TensorFlow 2 "
                f"computes the ordinary gradients instead of the overridden ones, silently. Run "
                f"`tf-grl-migrate {path}` to rewrite it to tf.custom_gradient; where the map spans a whole "
                "model, use tf_grl_migrate.gradient_override_map (TF1's meaning: the ops created in the block), "
                "or tf_grl_migrate.guard('honour') to give legacy calls that meaning unchanged."
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


# -- override_gradients: TF1's op-type gradient overrides, honoured by TF2's tapes ------------------

_ABSENT = object()
_OVERRIDES_LOCK = threading.RLock()
_ACTIVE = []  # [(token, {op type: registry entry})], innermost last
_ORIGINALS = {}  # op type -> its registry entry before the first active override (or _ABSENT)


def _gradient_registry():
    """TensorFlow's gradient registry: (table, type tag, location tag). It is the one
    TensorFlow-internal structure override_gradients relies on; anything else raises one error
    that names the TensorFlow version."""
    try:
        from tensorflow.python.framework import ops as tf_ops
        from tensorflow.python.framework import registry as tf_registry

        table = tf_ops._gradient_registry._registry
        type_tag, location_tag = tf_registry._TYPE_TAG, tf_registry._LOCATION_TAG
        if not isinstance(table, dict) or not isinstance(table.get("Identity"), dict) or type_tag not in table["Identity"]:
            raise TypeError("unexpected registry layout")
    except (ImportError, AttributeError, TypeError) as exc:
        raise RuntimeError(
            f"override_gradients relies on TensorFlow's gradient registry "
            f"(tensorflow.python.framework.ops._gradient_registry), which TensorFlow {tf.__version__} does not "
            "have in the form it was written for (TensorFlow 2.13 to 2.21); nothing was changed. Wrap the "
            "overridden ops in @tf.custom_gradient functions instead."
        ) from exc
    return table, type_tag, location_tag


def _is_op_type(name):
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(name) is not None


class _TapeOp:
    """The op a gradient function receives from an eager tape, where the tape kept less than the
    function reads: TensorFlow keeps an op's inputs or outputs only if that op type's *own*
    gradient needs them (an Identity keeps neither). Reading what was not kept raises a clear
    error instead of a TypeError on None."""

    __slots__ = ("_op",)

    def __init__(self, op):
        self._op = op

    def __getattr__(self, name):
        return getattr(self._op, name)

    def _kept(self, what):
        value = getattr(self._op, what)
        if value is None:
            raise ValueError(
                f"override_gradients: this gradient function reads op.{what} of a '{self._op.type}' op, which "
                f"TensorFlow's eager tape does not keep for '{self._op.type}' ops (their own gradient does not "
                "need them). Compute the gradient inside a tf.function with tf.gradients, or wrap that op "
                "in a @tf.custom_gradient function that closes over the tensors it needs."
            )
        return value

    @property
    def inputs(self):
        return self._kept("inputs")

    @property
    def outputs(self):
        return self._kept("outputs")


def _tape_safe(function):
    from .override_map import call_as_tf1  # run as TF1 ran it: in a graph

    def gradient(op, *grads):
        inputs, outputs = op.inputs, op.outputs
        if inputs is None or outputs is None:
            op = _TapeOp(op)
        return call_as_tf1(function, op, inputs, outputs, grads)

    gradient.__name__ = getattr(function, "__name__", "gradient")
    gradient.__wrapped__ = function
    return gradient


def _resolve_overrides(op_type_map, table, type_tag, location_tag):
    """{op type: registry entry}, every key and value checked before anything changes."""
    if not isinstance(op_type_map, dict):
        raise TypeError(f"override_gradients takes a dict {{op type: gradient}}, got {type(op_type_map).__name__}")
    resolved = {}
    for op_type, target in op_type_map.items():
        if not isinstance(op_type, str):
            raise TypeError(f"override_gradients: op type keys must be strings, got {op_type!r}")
        if not _is_op_type(op_type):
            raise ValueError(f"override_gradients: {op_type!r} is not a TensorFlow op type "
                             "(keys are op types such as 'Relu', 'Sign', 'Identity', not function names)")
        if isinstance(target, str):
            entry = _ORIGINALS.get(target, table.get(target, _ABSENT))  # TF1 maps to the registry as registered
            if entry is _ABSENT:
                raise ValueError(f"override_gradients: no gradient is registered as {target!r} (the target of "
                                 f"{op_type!r}); register it with @tf.RegisterGradient({target!r}) first, or pass "
                                 "the (op, grad) function itself")
            function = entry[type_tag]
            location = entry[location_tag]
        elif callable(target):
            function, location = target, ("override_gradients", 0, getattr(target, "__name__", "gradient"), "")
        else:
            raise TypeError(f"override_gradients: the gradient for {op_type!r} must be a registered gradient name "
                            f"or an (op, grad) function, got {type(target).__name__}")
        resolved[op_type] = {type_tag: None if function is None else _tape_safe(function), location_tag: location}
    return resolved


def _apply(table, op_types):
    """Point each op type at the innermost active override, or back at TensorFlow's own entry."""
    for op_type in op_types:
        entry = next((m[op_type] for _, m in reversed(_ACTIVE) if op_type in m), _ABSENT)
        if entry is _ABSENT:
            original = _ORIGINALS.pop(op_type)
            if original is _ABSENT:
                table.pop(op_type, None)
            else:
                table[op_type] = original
        else:
            table[op_type] = entry


class override_gradients:  # noqa: N801 - used like a function: `with override_gradients({...}):`
    """TF1's ``graph.gradient_override_map``, honoured by TF2: while the block is active, every
    gradient *computed* in it uses the mapped gradient for ops of the mapped types.

    ``op_type_map`` maps op types (``"Relu"``, ``"Sign"``) to a name registered with
    ``tf.RegisterGradient`` (a legacy registration works unchanged), the name of a built-in op type
    whose gradient is borrowed (``"Identity"``: straight through), or an ``(op, grad)`` function.
    The ``op`` it receives offers ``op.inputs``, ``op.outputs``, ``op.type`` and ``op.get_attr``.

    It applies where gradients are computed: ``tape.gradient`` (eagerly or inside a
    ``tf.function``), ``tf.gradients`` in a graph, a Keras train step *traced* inside the block.
    A ``tf.function`` traced inside the block keeps the override in that trace, also when called
    later; one traced before it keeps the gradients it was traced with. TensorFlow's gradient
    registry is process-wide: while a block is active, gradients computed by other threads see
    its overrides too, and after it they see the ordinary gradients again. Blocks nest (the inner
    map wins for the op types it names; the outer is restored on exit) and are restored on exit
    also when the block raises. Invalid keys or values raise before anything changes.

        with tf.GradientTape() as tape:
            tape.watch(x)
            y = model(x)[:, class_index]
        with override_gradients({"Relu": "GuidedRelu"}):
            saliency = tape.gradient(y, x)
    """

    __slots__ = ("_map", "_token")

    def __init__(self, op_type_map):
        self._map = op_type_map
        self._token = None

    def __enter__(self):
        if self._token is not None:
            raise RuntimeError("this override_gradients block is already active; create a new one to nest")
        with _OVERRIDES_LOCK:
            table, type_tag, location_tag = _gradient_registry()
            resolved = _resolve_overrides(self._map, table, type_tag, location_tag)
            token = object()
            for op_type in resolved:
                _ORIGINALS.setdefault(op_type, table.get(op_type, _ABSENT))
            _ACTIVE.append((token, resolved))
            _apply(table, resolved)
            self._token = token
        return self

    def __exit__(self, *exc):
        if self._token is None:
            raise RuntimeError("this override_gradients block is left but was never entered (or was left already): "
                               "call __enter__() first, or use it in a `with` statement")
        with _OVERRIDES_LOCK:
            table = _gradient_registry()[0]
            index = next(i for i, (token, _) in enumerate(_ACTIVE) if token is self._token)
            _, resolved = _ACTIVE.pop(index)
            _apply(table, resolved)
            self._token = None
        return False
