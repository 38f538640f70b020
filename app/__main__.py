"""Entry point: ``tickbench`` (or ``python -m app``) opens the window; subcommands run headless."""
from __future__ import annotations

import multiprocessing
import sys

# The command line's subcommands (app.cli.main.COMMANDS, which a test keeps in step), named here so
# that opening the window never imports the command line
COMMANDS = {"open", "delete", "run", "ab", "runs", "show", "compare", "verify", "reproduce", "hosts", "agent", "export", "import", "datasets", "workloads", "targets", "engines", "-h", "--help",
            "--version"}


def main(argv: list[str] | None = None) -> int:
    # First thing: in a frozen build, a spawned worker process re-enters here and must not
    # open a window or parse our arguments.
    multiprocessing.freeze_support()
    argv = sys.argv[1:] if argv is None else argv
    if _subcommand(argv) is not None:
        try:
            from app.cli.main import run_cli
            return run_cli(argv)
        except KeyboardInterrupt:      # Ctrl-C before a run's own handlers are set (while importing)
            print("tickbench: interrupted; nothing had started", file=sys.stderr)
            return 130
    from app.gui import run_gui
    return run_gui(argv)


def _subcommand(argv: list[str]) -> str | None:
    """The subcommand, also after global options such as ``--results FILE``."""
    args = iter(argv)
    for arg in args:
        if arg in COMMANDS:
            return arg
        if arg == "--results":
            next(args, None)
        elif not arg.startswith("--results="):
            return None
    return None


if __name__ == "__main__":
    sys.exit(main())
