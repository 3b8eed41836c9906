"""The one way a rewrite changes a module's imports: :class:`Imports` knows what the module
imports at its top level, answers the name the generated code must spell for a module (importing
it, once, under a fresh name where the module has none), joins a name to an existing
``from m import ...``, and drops the names a removal left unused. The rewrite (rewrite.Rewriter)
applies what it holds; nothing else writes import lines.

libcst's ``AddImportsVisitor``/``RemoveImportsVisitor`` are not used: they come with
``libcst.codemod`` and ``libcst.matchers`` (about 0.19 s more import per worker process, each run),
run a scope analysis of their own after ours, and place new imports by their own rule; the
generated code must land where the tool's byte-exact cases expect it (after the docstring and
the leading imports), and its dead imports are decided from the analysis the planner already made.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from ..knowledge import ops
from .nodes import Statement, bound_name, code_of, fresh_name, is_import_line, parsed_statement
from .safety import SafetyError

RUNTIME = "tf_grl_migrate"


class Imports:
    """What the rewrite adds to and removes from one module's imports. ``taken``: the module's
    names (shared with the builder, so a fresh name is fresh for every generated name)."""

    def __init__(self, module: cst.Module, taken: set[str]):
        self._module = module
        self._taken = taken
        self._lines: list[str] = []  # `import x [as y]` lines the rewrite needs, in the order asked
        self._names: dict[str, str] = {}  # module -> the name the generated code spells
        self.joined: dict[cst.ImportFrom, list[str]] = {}  # ImportFrom -> names it binds too
        self.dropped: dict[cst.Import | cst.ImportFrom, set[str]] = {}  # statement -> names it no longer binds

    # -- what the generated code spells --------------------------------------------------------------
    def tensorflow(self) -> str:
        """The module's name for TensorFlow (``import tensorflow as tf``, ``tensorflow.compat.v1``
        too), imported as a fresh ``tf`` where the module has none."""
        if "tensorflow" not in self._names:
            found = self._imported_as(lambda name: ops.canonical(name + ".") == "tensorflow.")
            if found is None:
                found = fresh_name("tf", self._taken)  # `tf` may name something else in this module
                self._lines.append(f"import tensorflow as {found}")
            self._names["tensorflow"] = found
        return self._names["tensorflow"]

    def module(self, module: str) -> str:
        """The name this module has for ``module`` at its top level (``import types``), imported
        (once) under a fresh name where it has none."""
        if module not in self._names:
            found = self._imported_as(lambda name: name == module)
            if found is None:
                found = fresh_name(module, self._taken)
                self._lines.append(f"import {module}" + (f" as {found}" if found != module else ""))
            self._names[module] = found
        return self._names[module]

    def runtime(self) -> None:
        """The rewrite calls ``tf_grl_migrate.…`` (a --use-runtime idiom): its import, once."""
        line = f"import {RUNTIME}"
        if line not in self._lines:
            self._lines.append(line)

    def spelled_tensorflow(self) -> str | None:
        """The TensorFlow name asked for so far (None: no generated code needs it)."""
        return self._names.get("tensorflow")

    def _imported_as(self, wanted: Callable[[str], bool]) -> str | None:
        """What a module-level ``import X`` (``as Y``) binds, for the first X with ``wanted(X)``."""
        for stmt in self._module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import):
                        for alias in small.names:
                            name = code_of(alias.name)
                            if wanted(name):
                                return bound_name(alias) if alias.asname else name
        return None

    # -- names joining or leaving an import ----------------------------------------------------------
    def join(self, module: str, level: int, name: str) -> None:
        """``name`` joins the module-level ``from <module> import ...`` (``level`` dots) of this
        module; a module without one is the rewrite's bug (SafetyError: nothing written)."""
        for stmt in self._module.body:
            if not isinstance(stmt, cst.SimpleStatementLine) or not is_import_line(stmt):
                continue
            for small in stmt.body:
                if (isinstance(small, cst.ImportFrom) and len(small.relative) == level
                        and (code_of(small.module) if small.module is not None else "") == module
                        and not isinstance(small.names, cst.ImportStar)):
                    self.joined.setdefault(small, []).append(name)
                    return
        raise SafetyError(f"no `from {'.' * level}{module} import` to add {name} to")

    def drop(self, node: cst.Import | cst.ImportFrom, name: str) -> None:
        """The import statement ``node`` no longer binds ``name`` (every use of it was removed)."""
        self.dropped.setdefault(node, set()).add(name)

    # -- what the rewrite applies ------------------------------------------------------------------
    def statements(self) -> list[Statement]:
        """The import statements to insert after the module's leading imports."""
        return [parsed_statement(line + "\n") for line in self._lines]

    def edited(self) -> list[cst.CSTNode]:
        """Every existing import statement whose names change."""
        return [*self.dropped, *self.joined]
