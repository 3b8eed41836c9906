"""The migration as a LibCST codemod command, for teams that already run
``python -m libcst.tool codemod ...`` over their repositories.

With ``tf_grl_migrate`` in the ``modules`` list of ``.libcst.codemod.yaml``::

    python -m libcst.tool codemod libcst_command.MigrateGradientOverrides src/
    python -m libcst.tool codemod libcst_command.MigrateGradientOverrides --use-runtime src/

It applies exactly what ``tf-grl-migrate --write`` applies (the same engine, through
:func:`tf_grl_migrate.migrate_source`); every refusal is reported as a codemod warning
``GRLnnn line:col: message``, and a file the tool cannot process is skipped with its reason.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, SkipFile

from .api import migrate_source


class MigrateGradientOverrides(CodemodCommand):
    DESCRIPTION = ("Migrate TF1 gradient_override_map code (gradient reversal, straight-through estimators, "
                   "gradient clipping) to TF2 tf.custom_gradient; refusals become warnings.")

    def __init__(self, context, use_runtime: bool = False) -> None:
        super().__init__(context)
        self.use_runtime = use_runtime

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--use-runtime", action="store_true", dest="use_runtime",
                                help="exact gradient reversals call tf_grl_migrate.flip_gradient")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        source = tree.code
        result = migrate_source(source, use_runtime=self.use_runtime, path=self.context.filename or "<module>")
        for d in result.diagnostics:
            if d.is_failure:
                raise SkipFile(f"{d.code} {d.line}:{d.col}: {d.message}")
            self.warn(f"{d.code} {d.line}:{d.col}: {d.message}")
        if not result.changed:
            return tree
        return cst.parse_module(result.code)
