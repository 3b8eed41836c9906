"""Legacy Keras DANN layers import ``Layer`` from ``keras.engine``, which Keras 3 (TF >= 2.16)
removed: a migrated file that still does fails at import under TF2, so it gets a note."""

from __future__ import annotations

import libcst as cst

from ..nodes import _code, _is_import_line
from ..report import Diagnostic
from .base import Idiom, source

IDIOM = Idiom(
    name="keras_engine",
    summary="a migrated file importing keras.engine: a note naming the drop-ins",
    codes=("GRL201",),
    examples={
        "GRL201": source("""
            import tensorflow as tf
            from keras.engine import Layer


            @tf.RegisterGradient("Rev")
            def _rev(op, grad):
                return -grad


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Identity": "Rev"}):
                    return tf.identity(x)
            """),
    },
)

MESSAGE = ("note: this file imports keras.engine, which Keras 3 (TF >= 2.16) removed; import Layer from keras "
           "(keras.layers.Layer), or use tf_grl_migrate.GradientReversal as a drop-in gradient reversal layer")


def notes(planner) -> list[Diagnostic]:
    """GRL201 at each import of ``keras.engine`` (or a submodule) at module level."""
    found = []
    for stmt in planner.module.body:
        if not _is_import_line(stmt):
            continue
        for small in stmt.body:
            names = ([_code(a.name) for a in small.names] if isinstance(small, cst.Import)
                     else [_code(small.module)] if small.module is not None else [])
            if any(n == "keras.engine" or n.startswith("keras.engine.") for n in names):
                found.append(Diagnostic(*planner.pos(stmt), "GRL201", MESSAGE))
    return found
