"""The console script and ``python -m tf_grl_migrate``: a command repeated over an unchanged tree
is answered from its record (rerun.py) before the command line (cli.py, click) is imported."""

import sys

from . import rerun


def main() -> None:
    argv = sys.argv[1:]
    status = rerun.replay(argv)
    if status is not None:
        sys.exit(status)
    from .cli import main as command

    command(args=argv, prog_name="tf-grl-migrate", obj=rerun.Recorder(argv))


if __name__ == "__main__":
    main()
