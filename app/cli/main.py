"""The command line: ``tickbench run | ab | runs | show | compare | verify | reproduce | hosts | agent | export | import | datasets | workloads |
targets | engines | open``.

Here: the parser and the table of subcommands. Each subcommand lives in an app/cli_*.py module
(run: cli_run, its scenario: cli_scenario, runs/show/export/open: cli_results, import/datasets/workloads:
cli_datasets); what they share in cli_common."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from app.cli.ab import add_ab_parser, cmd_ab
from app.cli.agent import add_agent_parser, cmd_agent
from app.cli.common import QUOTE_SIZE_HELP, CliError, _fail, _registry, _store, added_work, console, err_console
from app.cli.datasets import cmd_datasets, cmd_import, cmd_workloads
from app.cli.engines import add_engines_parser, cmd_engines
from app.cli.hosts import add_hosts_parser, add_scheduler_arguments, cmd_hosts
from app.cli.open_loop import add_rate_arguments
from app.cli.reports import add_verify_parser, cmd_verify
from app.cli.reproduce import add_reproduce_parser, cmd_reproduce
from app.cli.compare import add_compare_parser, cmd_compare
from app.cli.results import cmd_delete, cmd_export, cmd_open, cmd_runs, cmd_show
from app.cli.run import cmd_run
from app.cli.scenario import _kind_and_config
from app.cli.targets import add_targets_parser, cmd_targets
from app.cli.ddb_options import add_dolphindb_arguments
from workloads.paths import default_datasets_dir
from workloads.results.figures import MIN_OPS
from workloads.run.processes import PROCESSES, START_METHODS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line instead of usage + message
        raise CliError(message)


def add_scenario_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that make a scenario (``app.cli.scenario.scenario_from_args``): run's, and ab's side A."""
    parser.add_argument("--scenario", type=Path, help="a scenario TOML file; flags given also override it")
    parser.add_argument("--name", help="a name for the run")
    parser.add_argument("--target", help="pickle | parquet | feather | duckdb | clickhouse | arcticdb | hdf5 | "
                                         "dolphindb, or a saved server's key (ddb:NAME, ch:NAME: see 'tickbench targets')")
    parser.add_argument("--dataset", help="taq | level2 | devices | api45 | imp_NAME (an imported CSV)")
    parser.add_argument("--days", type=int)
    parser.add_argument("--rows-per-day", type=int)
    parser.add_argument("--symbols", type=int, help="symbols / securities / devices")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--strings", help="object | str | category (how string columns are decoded)")
    parser.add_argument("--workload", help="read-day | slice-download | upload-sweep | concurrent-append | minute-bars | "
                                           "spread-by-minute | mapreduce-minute-bars | ols-spread | noop")
    parser.add_argument("--users", help="one number or a sweep, e.g. 1,2,4,8")
    parser.add_argument("--cache", help="warm | cold")
    parser.add_argument("--start", choices=START_METHODS,
                        help="how each step's users start: forked from a server that preloaded the engine's "
                             "modules (forkserver, default), or each a fresh interpreter (spawn: a fully cold first "
                             "operation, ~60 MiB and a second or more per user)")
    parser.add_argument("--process", choices=PROCESSES,
                        help="settled (default): a long-lived client's allocator and pandas 3 strings; plain: "
                             "glibc's and the installed pandas' own defaults, as a fresh script runs (recorded)")
    parser.add_argument("--operations", type=int, help="operations per user per step")
    parser.add_argument("--duration", type=float, help="seconds per step instead of an operation count; a "
                        f"step also runs on until its users have made {MIN_OPS} operations together")
    parser.add_argument("--warmup", type=int, help="warm-up operations per user per step, recorded apart "
                                                   "(default 1)")
    parser.add_argument("--probes", type=int, help="probe operations per user per step for phase splits "
                                                   "that need them (default 2; 0: none)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a workload parameter, e.g. rows_per_user=500000 (repeatable)")
    parser.add_argument("--data-dir", type=Path, help="where local targets lay out data")
    add_scheduler_arguments(parser)
    add_rate_arguments(parser)
    parser.add_argument("--added-work", type=added_work, action=_AddedWork, metavar="MS|PCT%",
                        help="a CPU busy loop of MS milliseconds, or of PCT%% of the operation's own time, inside "
                             "every measured operation's timed span, after the operation: a known slowdown "
                             "(recorded as the parameter added_work_s or added_work_share)")
    parser.add_argument("--agent", action="append", default=[], metavar="HOST:PORT",
                        help="a database host's agent (tickbench agent there; repeatable): a cold round has it "
                             "drop that host's page cache; its token from TICKBENCH_AGENT_TOKEN")
    add_dolphindb_arguments(parser)


class _AddedWork(argparse.Action):
    """--added-work MS|PCT%: the workload parameter it sets, as --param would give it."""

    def __call__(self, parser, namespace, values, option_string=None):
        params = list(getattr(namespace, "param", None) or [])
        params.append(values)
        setattr(namespace, "param", params)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tickbench", description="Benchmark where and how tick data is stored and served.",
                     epilog="In the window: tickbench (no command) opens it; tickbench demo [--minutes 5|10|20] "
                            "[--replay] plays the narrated demo for an audience (tickbench demo --help).")
    parser.add_argument("--version", action="version", version="tickbench 0.1.0")
    parser.add_argument("--results", type=Path, help="results file (default: in the user data folder)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run a scenario and print its figures")
    add_scenario_arguments(run)
    run.add_argument("--scenario-stdin", action="store_true",
                     help="read the whole scenario as JSON from standard input (how the window starts a "
                          "run: a password in it is never written anywhere)")
    run.add_argument("--run-id", help="the run's id (default: a new one)")
    run.add_argument("--nice", type=int, default=0,
                     help="lower the run's and its workers' CPU priority by this much (the window starts "
                          "its runs at 5 so that it stays responsive on a saturated machine; recorded)")
    run.add_argument("--force", action="store_true",
                     help="run even where the users or the data look more than this machine can hold "
                          "(the estimate is refused otherwise)")
    run.add_argument("--live", action="store_true",
                     help="publish live snapshots to the run's folder and obey a stop request there "
                          "(the window's viewer), instead of a progress bar")
    add_verify_parser(sub)
    add_reproduce_parser(sub)
    add_hosts_parser(sub)
    add_agent_parser(sub)
    sub.add_parser("runs", help="list stored runs")
    show = sub.add_parser("show", help="figures of one run")
    show.add_argument("run_id")
    export = sub.add_parser("export", help="write a run's records to CSV or Parquet, one of its charts, or the "
                                           "whole run as a bundle another Tickbench opens")
    export.add_argument("run_id")
    export.add_argument("--format", choices=("csv", "parquet"), help="the records' format (default csv)")
    export.add_argument("--bundle", type=Path, metavar="FILE.tbrun",
                        help="write the whole run as one file instead (tickbench open FILE.tbrun adds it to a catalog)")
    export.add_argument("--out", type=Path, default=Path("."),
                        help="the folder the files go to; with --chart, the file (.png, .svg, .pdf or .csv)")
    export.add_argument("--force", action="store_true", help="overwrite the run's files already in --out")
    export.add_argument("--chart", metavar="NAME", help="write this chart of the run instead of its records: "
                        "throughput, data, latency, phases, cpu, memory, sweep, queries or footprint")
    export.add_argument("--size", default="1920x1080", metavar="WxH", help="with --chart: pixels (default 1920x1080)")
    export.add_argument("--dpi", type=int, help="with --chart: dots per inch recorded for print (default 96)")
    bundle = sub.add_parser("open", help="add the run in a bundle (tickbench export RUN --bundle) to the catalog")
    bundle.add_argument("bundle", type=Path, metavar="FILE.tbrun")
    delete = sub.add_parser("delete", help="remove runs from the catalog for good (a damaged one too)")
    delete.add_argument("run_ids", nargs="+", metavar="RUN", help="a run id, or the start of one naming one run")
    imp = sub.add_parser("import", help="import a tick file or folder as a dataset to benchmark (imp_NAME)")
    imp.add_argument("file", type=Path, metavar="FILE_OR_FOLDER",
                     help="a CSV (with a header), Parquet or Feather file, or a folder of them (hive date=... too)")
    imp.add_argument("--name", required=True, help="a name for it: lower-case letters, digits, _")
    imp.add_argument("--time", help="the time column: a timestamp, or a date with --time-of-day")
    imp.add_argument("--time-of-day", default="", metavar="COLUMN", help="with a date --time: its time-of-day column")
    imp.add_argument("--key", default="", metavar="COLUMN", help="symbol / instrument / device (optional)")
    imp.add_argument("--price", action="append", default=[], metavar="COLUMN",
                     help="a price column (twice: bid and ask); minute bars need one")
    imp.add_argument("--size", default="", metavar="COLUMN", help="a traded size: minute bars add its volume")
    imp.add_argument("--quote-size", action="append", default=[], metavar="COLUMN",
                     help=QUOTE_SIZE_HELP)
    imp.add_argument("--type", action="append", default=[], metavar="COLUMN=TYPE",
                     help="store a column as TYPE instead of the inferred one (SYMBOL, STRING, LONG, DOUBLE, "
                          "TIMESTAMP, NANOTIMESTAMP, ...; repeatable)")
    imp.add_argument("--zone", default="", help="the zone of timestamps written without one (e.g. America/New_York)")
    imp.add_argument("--delimiter", default=None, help="a CSV's delimiter (default: found from its first lines)")
    fmt = imp.add_argument_group("how a CSV writes its values")
    fmt.add_argument("--time-format", default="", metavar="FORMAT",
                     help="the timestamps' format in strptime's fields, e.g. '%%d/%%m/%%Y %%H:%%M:%%S' (a fraction "
                          "of a second: end with .%%f); default ISO 8601")
    fmt.add_argument("--epoch", choices=("s", "ms", "us", "ns"), default="",
                     help="the unit of integer times (default: from their magnitude)")
    fmt.add_argument("--decimal", choices=(".", ","), default=".", help="the decimal mark (',': 168,6521)")
    fmt.add_argument("--quote", default='"', metavar="CHAR", help="the quote character; 'none' if the file quotes "
                                                                  "nothing (default \")")
    fmt.add_argument("--escape", default="", metavar="CHAR", help="an escape character (default: none; a doubled "
                                                                  "quote escapes)")
    fmt.add_argument("--null", action="append", default=[], metavar="TEXT",
                     help="a value read as missing (repeatable; default: empty, NA, NULL, NaN, ...)")
    fmt.add_argument("--encoding", default="utf-8", help="the file's encoding (default utf-8; e.g. latin-1, cp1252)")
    imp.add_argument("--skip-bad-rows", action="store_true",
                     help="leave out rows that do not fit (counted and listed) instead of stopping")
    pair = imp.add_argument_group("trades paired with quotes: the tick pack on your data")
    pair.add_argument("--trades-of", default="", metavar="QUOTES",
                      help="this file is the trades of the import QUOTES (its key, bid/ask and quote sizes named): "
                           "imp_NAME is then the pair, in TAQ's columns, that the tick pack runs on")
    pair.add_argument("--exchange-zone", default="", metavar="ZONE",
                      help="with --trades-of: the zone of the exchange's days and times of day (default: the "
                           "offset the quotes carry; e.g. America/New_York)")
    imp.add_argument("--preview", action="store_true", help="show the columns, inferred types and roles; import nothing")
    imp.add_argument("--replace", action="store_true",
                     help="replace an earlier import of this name (without it, an existing name is refused)")
    imp.add_argument("--dataset", help="instead of --time: read the CSV against a built-in schema "
                                       "(taq | level2 | devices | api45)")
    imp.add_argument("--map", action="append", default=[], metavar="CSVCOL=column",
                     help="with --dataset: read the CSV column CSVCOL as the schema's column (repeatable)")
    sub.add_parser("datasets", help="list datasets and their schemas")
    workloads = sub.add_parser("workloads", help="list workloads and their parameters")
    workloads.add_argument("--dataset", help="only those that can run on this dataset; the others with why not")
    add_targets_parser(sub)
    add_engines_parser(sub)
    add_compare_parser(sub)
    add_ab_parser(sub, add_scenario_arguments)
    return parser


def run_cli(argv: list[str]) -> int:
    command = None
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        return COMMANDS[command](args)
    except CliError as exc:
        err_console.print(f"tickbench: error: {exc}", highlight=False, soft_wrap=True, markup=False)
        return 2
    except KeyboardInterrupt:
        err_console.print("tickbench: interrupted")
        return 130
    except Exception as exc:                # noqa: BLE001 (a catalog command fails in one line, never a traceback)
        if command not in CATALOG_COMMANDS or os.environ.get("TICKBENCH_TRACEBACK"):
            raise
        said = " ".join(str(exc).split())[:300]
        err_console.print(f"tickbench: error: {type(exc).__name__}" + (f": {said}" if said else ""), highlight=False,
                          soft_wrap=True, markup=False)
        return 2


# commands that read or change the catalog: any error is one line and exit 2 (TICKBENCH_TRACEBACK=1
# shows the traceback of one not foreseen)
CATALOG_COMMANDS = frozenset({"runs", "show", "compare", "export", "open", "delete"})


COMMANDS = {"run": cmd_run, "runs": cmd_runs, "show": cmd_show,
            "verify": lambda args: cmd_verify(args, console, err_console, CliError, _kind_and_config),
            "hosts": lambda args: cmd_hosts(args, console, _fail),
            "agent": lambda args: cmd_agent(args, _fail),
            "reproduce": lambda args: cmd_reproduce(args, _store(args), console, err_console, CliError,
                                                    _kind_and_config, args.data_dir or default_datasets_dir()),
            "targets": lambda args: cmd_targets(args, _registry(args), console, CliError),
            "engines": lambda args: cmd_engines(args, _registry(args), console, err_console, CliError),
            "export": cmd_export, "compare": cmd_compare, "ab": cmd_ab,
            "open": cmd_open, "delete": cmd_delete,
            "import": cmd_import, "datasets": cmd_datasets, "workloads": cmd_workloads}
