"""What every subcommand shares: the consoles, CliError (a user mistake: one line, exit code 2),
and opening the results store and the saved targets' registry."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from workloads.paths import default_datasets_dir, default_results_path
from workloads.text import printable


class PlainConsole(Console):
    """A console that writes no control character it did not make itself: a run's name, a server's
    message or a file's field holding a terminal's escape sequences (a colour, an OSC-8 link) is
    written with them escaped, whichever command prints it. ``plain`` and ``safe`` do that where the
    text enters (so tables measure what they show); this is the net under every other print."""

    def _render_buffer(self, buffer) -> str:
        return super()._render_buffer(segment if segment.control else
                                      Segment(printable(segment.text), segment.style, segment.control)
                                      for segment in buffer)


def plain(value) -> Text:
    """Text from a file, a run or a server as a Rich cell or line: never markup, its control
    characters shown as escapes."""
    return Text(printable(str(value)))


def safe(value) -> str:
    """The same text for a markup string (``f"[red]{safe(message)}[/red]"``): its brackets escaped."""
    return escape(printable(str(value)))


# Piped output (CI logs, files) gets a wide table instead of an 80-column squeeze.
console = PlainConsole(width=None if sys.stdout.isatty() else 200)
err_console = PlainConsole(stderr=True)
# ``import`` and ``targets add-table`` name the same roles
QUOTE_SIZE_HELP = ("the size quoted at the bid, then at the ask (twice, beside --price BID --price ASK): "
                   "what report 003's OLS regresses on")


class CliError(Exception):
    """A user mistake: printed as one line, exit code 2."""


def _store(args):
    import duckdb

    from workloads.results.store import ResultsStore, StoreError
    path = args.results or default_results_path()
    try:
        return ResultsStore(path)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except (duckdb.Error, OSError, ValueError, KeyError, IndexError) as exc:   # a file that is not a catalog
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CliError(f"--results {path}: not a Tickbench results catalog ({first})") from None


def _fail(message: str):
    raise CliError(message)


def _registry(args):
    from workloads.passwords import KeyringPasswords
    from workloads.targets.registry import TargetRegistry
    return TargetRegistry.load(getattr(args, "data_dir", None) or default_datasets_dir(), KeyringPasswords())


def finite_above_zero(text: str) -> float:
    """An argparse type: a finite number above 0 (a percentage, minutes), or one clear line."""
    import argparse
    import math
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"takes a finite number above 0, not {text!r}")
    return value


def added_work(text: str) -> str:
    """An argparse type: ``MS`` milliseconds of CPU (0-60000) or ``PCT%`` of each operation's own
    time (0-1000 %) added inside every measured operation; the workload parameter it sets, as
    ``NAME=VALUE`` (``added_work_s`` or ``added_work_share``)."""
    import argparse
    import math
    given = text.strip()
    share = given.endswith("%")
    try:
        value = float(given[:-1] if share else given)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= (1000 if share else 60_000)):
        raise argparse.ArgumentTypeError("takes milliseconds from 0 to 60000, or a share of each operation's "
                                         f"own time from 0% to 1000%, not {text!r}")
    return f"added_work_share={value / 100:g}" if share else f"added_work_s={value / 1000:g}"
