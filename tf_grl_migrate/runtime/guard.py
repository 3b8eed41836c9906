"""The runtime guard: ``Graph.gradient_override_map`` made to fail loudly where TensorFlow 2
ignores it (eagerly and in ``tf.function``), or, with ``guard("honour")``, to mean what it meant
in TF1 (``override_map.gradient_override_map``)."""

from __future__ import annotations

from types import FrameType
from typing import Any

import tensorflow as tf

__all__ = ["GradientOverrideIgnoredError", "GradientOverrideIgnoredWarning", "guard", "unguard"]


class GradientOverrideIgnoredError(RuntimeError):
    """gradient_override_map used where TensorFlow 2 ignores it."""


class GradientOverrideIgnoredWarning(UserWarning):
    """gradient_override_map used where TensorFlow 2 ignores it."""


_GUARD: dict[str, Any] = {"original": None, "action": None}
_INTERNAL_PREFIXES = ("tensorflow.", "keras.", "tf_keras.", "tensorflow_probability.")


def _ignored_because(graph: object) -> str | None:
    """Why TF2 will ignore an override map entered on ``graph`` now, or None where it works."""
    from tensorflow.python.framework.func_graph import FuncGraph

    if tf.executing_eagerly():
        return "under eager execution, where it is always ignored"
    if isinstance(graph, FuncGraph):
        return "inside a tf.function graph, where tf.GradientTape ignores it"
    return None  # legacy graph mode (tf.compat.v1 graph + Session): the map still works


def _user_location(frame: FrameType) -> tuple[str, int]:
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


def guard(action: str = "raise") -> None:
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
    def gradient_override_map(self: Any, op_type_map: dict) -> Any:
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


def unguard() -> None:
    """Undo :func:`guard` (a no-op when it is not active)."""
    from tensorflow.python.framework import ops as tf_ops

    if _GUARD["original"] is not None:
        tf_ops.Graph.gradient_override_map = _GUARD["original"]
        _GUARD["original"] = _GUARD["action"] = None


