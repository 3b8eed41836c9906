"""A migrated module's Keras 2 layer code, respelled so that the module imports and its layers run
under Keras 3 (TF >= 2.16), where the legacy gradient reversal layer (``class
GradientReversal(Layer)``) failed at import, then at its first call:

- ``from keras.engine import Layer`` (or ``keras.engine.topology``, ``tensorflow.keras.engine``):
  the names from where Keras 3 and Keras 2 both have them (``keras.layers``, ``keras.models``);
- ``from keras import backend as K`` where the module calls what only Keras 2's backend had
  (``K.variable``, ``K.get_value``, ``K.set_value``): the backend TF2 keeps for it,
  ``tensorflow.keras.backend`` (every name of Keras 3's ``keras.backend`` is there too);
- ``self.trainable_weights = []`` in a layer that makes no weights: Keras 3 (and tf_keras) track a
  layer's weights themselves and refuse to have the list set; the statement said "none".

What cannot be respelled safely gets a GRL201 note at its line. Only modules the tool migrates are
touched. The Keras names come from the generated ``_keras_names.txt`` (``ops.keras_names``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ...knowledge import ops
from ...report import Diagnostic
from ..nodes import bound_name, code_of, is_docstring, is_import_line, parsed_expression, parsed_statement
from ..plan import DropStatement, Edit, Note, Replace
from ..traversal import QuickVisitor
from .base import Idiom, source
from .contract import rule

if TYPE_CHECKING:
    from .contract import Converting, Facts


IDIOM = Idiom(
    name="keras_layer",
    summary=("a migrated Keras 2 layer module respelled for Keras 3: keras.engine imports, the backend, "
             "trainable_weights"),
    codes=("GRL201",),
    examples={
        "GRL201": source("""
            import tensorflow as tf
            from keras.engine import Network


            @tf.RegisterGradient("Rev")
            def _rev(op, grad):
                return -grad


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Identity": "Rev"}):
                    return tf.identity(x)
            """),
    },
    cases=("keras_gradient_reversal_layer_module",),
    valid=(source("""
        import tensorflow as tf
        from keras.engine import Layer
        from keras import backend as K


        @tf.RegisterGradient("LayerReversal")
        def _reverse(op, grad):
            return [tf.negative(grad)]


        def reverse_gradient(x):
            g = K.get_session().graph
            with g.gradient_override_map({"Identity": "LayerReversal"}):
                return tf.identity(x)


        class GradientReversal(Layer):
            def build(self, input_shape):
                self.trainable_weights = []

            def call(self, x, mask=None):
                return reverse_gradient(x)
        """),),
)

ENGINES = ("keras.engine", "tensorflow.keras.engine")
HOMES = ("layers", "models")
SETTABLE_ONCE = ("trainable_weights", "non_trainable_weights")
MAKES_WEIGHTS = {"add_weight", "add_variable", "trainable_weights", "non_trainable_weights", "_trainable_weights",
                 "_non_trainable_weights", "weights", "trainable_variables"}


@rule("edit_module")
def edit_module(builder: Converting) -> list[Edit]:
    """Respell what a migrated module's Keras 2 layer code needs (statements replaced and
    removed); the notes for what it cannot."""
    facts = builder.facts
    notes: list[Diagnostic] = []
    edits: list[Edit] = []
    respell_backend = _backend_reads(builder, notes)
    for stmt in facts.module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and is_import_line(stmt):
            new = _import_line(facts, stmt, respell_backend, notes)
            if new is not None:
                edits.append(Replace(stmt, new))
    for cls in facts.of_type(cst.ClassDef):
        if _is_keras_layer(facts, cls):
            edits += _weights_lists(builder, cls, notes)
    return [*edits, *(Note(d) for d in notes)]


def _engine_root(module: str) -> str | None:
    for engine in ENGINES:
        if module == engine or module.startswith(engine + "."):
            return engine.rsplit(".", 1)[0]
    return None


def _import_line(facts: Facts, stmt: cst.SimpleStatementLine, respell_backend: set[str],
                 notes: list[Diagnostic]) -> cst.SimpleStatementLine | None:
    """The import line respelled for Keras 3, or None where it stays (a note where it cannot)."""
    if len(stmt.body) != 1:
        if any(_needs_respelling(small, respell_backend) for small in stmt.body):
            notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "several_imports", statement=_shown(stmt)))
        return None
    small = stmt.body[0]
    if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
        module = code_of(small.module)
        root = _engine_root(module)
        if root is not None:
            return _engine_import(facts, stmt, small, module, root, notes)
        if module == "keras" and not isinstance(small.names, cst.ImportStar) and _binds_backend(small, respell_backend):
            if len(small.names) != 1:
                notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "backend_line", statement=_shown(stmt)))
                return None
            return stmt.with_changes(body=[small.with_changes(module=parsed_expression("tensorflow.keras"))])
    if isinstance(small, cst.Import):
        for alias in small.names:
            name = code_of(alias.name)
            if _engine_root(name) is not None:
                notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "engine_import", statement=_shown(stmt),
                                             module=name))
                return None
        if len(small.names) == 1 and code_of(small.names[0].name) == "keras.backend" and small.names[0].asname \
                and bound_name(small.names[0]) in respell_backend:
            alias = small.names[0].with_changes(name=parsed_expression("tensorflow.keras.backend"))
            return stmt.with_changes(body=[small.with_changes(names=[alias])])
    return None


def _engine_import(facts: Facts, stmt: cst.SimpleStatementLine, small: cst.ImportFrom, module: str, root: str,
                   notes: list[Diagnostic]) -> cst.SimpleStatementLine | None:
    if isinstance(small.names, cst.ImportStar):
        notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "engine_star", statement=_shown(stmt), module=module,
                                     root=root))
        return None
    names = [code_of(alias.name) for alias in small.names]
    homes = {name: [h for h in HOMES if f"{root}.{h}.{name}" in ops.keras_names()] for name in names}
    missing = [n for n, found in homes.items() if not found]
    if missing:
        notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "engine_missing", statement=_shown(stmt),
                                     missing=", ".join(missing), module=module,
                                     homes=" and ".join(f"{root}.{h}" for h in HOMES)))
        return None
    home = homes[names[0]][0]
    if any(home not in found for found in homes.values()):
        notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "engine_split", statement=_shown(stmt), module=module,
                                     names=", ".join(n for n, f in homes.items() if home in f), home=f"{root}.{home}"))
        return None
    return stmt.with_changes(body=[small.with_changes(module=parsed_expression(f"{root}.{home}"))])


def _binds_backend(small: cst.ImportFrom, respell_backend: set[str]) -> bool:
    if isinstance(small.names, cst.ImportStar):
        return False
    return any(alias.name.value == "backend" and (code_of(alias.asname.name) if alias.asname else "backend")
               in respell_backend for alias in small.names if isinstance(alias.name, cst.Name))


def _needs_respelling(small: cst.BaseSmallStatement, respell_backend: set[str]) -> bool:
    if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
        module = code_of(small.module)
        return _engine_root(module) is not None or (
            module == "keras" and not isinstance(small.names, cst.ImportStar) and _binds_backend(small, respell_backend)
        )
    return isinstance(small, cst.Import) and any(_engine_root(code_of(a.name)) is not None for a in small.names)


def _backend_reads(builder: Converting, notes: list[Diagnostic]) -> set[str]:
    """The module-level names bound to Keras 3's ``keras.backend`` through which the migrated
    module still calls what only Keras 2's backend had: those imports move to
    ``tensorflow.keras.backend``, which TF2 keeps with those functions. A name neither has gets a
    note at its use."""
    facts = builder.facts
    bound = _backend_names(facts.module)
    if not bound:
        return set()
    respell = set()
    for node in facts.of_type(cst.Attribute):
        if (not isinstance(node.value, cst.Name)
                or node.value.value not in bound or builder.is_dead(node)):
            continue
        for qualified in facts.qn(node, raw=True):
            if not qualified.startswith("keras.backend.") or qualified.count(".") != 2:
                continue
            attr = qualified.rsplit(".", 1)[1]
            fate = ops.keras_backend_lacks(attr)
            if fate is None:
                continue
            if fate == "tf.keras":
                respell.add(node.value.value)
            else:
                notes.append(Diagnostic.said(facts.pos(node), "GRL201", "backend_gone", name=code_of(node), attr=attr))
    return respell


def _backend_names(module: cst.Module) -> set:
    """The names module-level imports bind to Keras's backend (``K``)."""
    found: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine) or not is_import_line(stmt):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                found |= {bound_name(alias) for alias in small.names
                          if alias.asname is not None and code_of(alias.name) == "keras.backend"}
            elif (isinstance(small, cst.ImportFrom) and small.module is not None and code_of(small.module) == "keras"
                  and not isinstance(small.names, cst.ImportStar)):
                found |= {(bound_name(alias) if alias.asname else "backend") for alias in small.names
                          if isinstance(alias.name, cst.Name) and alias.name.value == "backend"}
    return found


def _is_keras_layer(facts: Facts, cls: cst.ClassDef, depth: int = 3) -> bool:
    """A class deriving from a Keras ``Layer`` (Keras 2 or 3, ``tf.keras``, tf_keras), or from a
    class of this module that does."""
    for base in cls.bases:
        if base.keyword is not None:
            continue
        for qualified in facts.qn(base.value, raw=True):
            parts = qualified.split(".")
            if parts[-1] == "Layer" and parts[0] in ("keras", "tensorflow", "tf_keras"):
                return True
        if depth and isinstance(base.value, cst.Name):
            local = next((r.node for r in facts.referents(base.value) if isinstance(r.node, cst.ClassDef)), None)
            if local is not None and local is not cls and _is_keras_layer(facts, local, depth - 1):
                return True
    return False


class _LayerBody(QuickVisitor):
    """In a class: its ``self.trainable_weights = []`` lines, and whether anything else in it
    speaks of weights (``add_weight``, ``self.trainable_weights.append``)."""

    def __init__(self) -> None:
        self.lists: list[cst.SimpleStatementLine] = []
        self.weights = False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if _sets_weights_list(node):
            self.lists.append(node)
            return False
        return True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.weights = self.weights or node.attr.value in MAKES_WEIGHTS


def _weights_lists(builder: Converting, cls: cst.ClassDef, notes: list) -> list[Edit]:
    """``self.trainable_weights = []`` in a layer's methods: dropped where the layer makes no
    weights (Keras tracks them itself; the line said "none"), else a note."""
    facts = builder.facts
    body = _LayerBody()
    body.walk(cls)
    edits: list[Edit] = []
    for stmt in body.lists:
        if body.weights:
            notes.append(Diagnostic.said(facts.pos(stmt), "GRL201", "weight_lists", statement=_shown(stmt)))
            continue
        block = facts.parent(stmt)
        if [s for s in getattr(block, "body", ()) if not is_docstring(s)] == [stmt]:
            edits.append(Replace(stmt, parsed_statement("pass\n").with_changes(
                leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace)))
        else:
            edits.append(DropStatement(stmt))
    return edits


def _sets_weights_list(stmt: cst.SimpleStatementLine) -> bool:
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return False
    assign = stmt.body[0]
    return (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Attribute)
            and isinstance(assign.targets[0].target.value, cst.Name) and assign.targets[0].target.value.value == "self"
            and assign.targets[0].target.attr.value in SETTABLE_ONCE
            and isinstance(assign.value, cst.List) and not assign.value.elements)


def _shown(stmt: cst.CSTNode) -> str:
    """A statement as a note quotes it."""
    return code_of(stmt).strip()
