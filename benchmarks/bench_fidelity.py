"""Timing fidelity: does Tickbench report what the same call costs timed directly?

For each file target and DuckDB, one TAQ day is read:
- directly, by the call a user makes (``pickle.load``, ``pq.read_table(path).to_pandas()``,
  ``pa.ipc.open_file(path).read_all().to_pandas()``, DuckDB ``con.sql(q).to_arrow_table().to_pandas()``),
  written here without Tickbench's code, in a fresh process of its own, started as the run's user is
  (``--start``: forked from the same preloaded server, or spawned): warm-up calls until the
  process is steady, by the rule a worker follows (``workloads.run.warmup.more_warmup``: at least
  one, then until three agree within 15 %), then ``--repeat`` timed calls, each result freed before
  the next call;
- by a Tickbench run: one worker process, its warm-up (the same rule, recorded apart), ``--repeat``
  measured operations; the figures are the stored ones (``workloads.results.figures``).
For the other engines (chDB, ArcticDB, HDF5, and with ``--servers`` a local QuestDB, PostgreSQL or
Druid, or ``--mongo`` the MongoDB wire-protocol stand-in) "direct" is the target's own ``read_day`` in
a plain loop of a fresh process: no runner, worker, collector or store. That isolates what
Tickbench's measuring adds; how the target's method compares with other client calls is its module's
business (documented there), not fidelity's.
Both start from a fresh process because the first tens of reads of a process are not alike (the
allocators settle: a 2M-row DuckDB read went from ~70 to ~47 ms over thirty reads here).
``--rounds`` alternates the two so machine noise hits both alike, and pools the samples. It
prints best and median of each and the gaps, and the paired ratio (``workloads.practitioner.paired``:
each round's k-th stored operation over the direct loop's k-th call, the median of those ratios with
a 95 % interval resampling whole rounds), which takes out the drift between rounds that the pooled
medians keep (two runs' pooled medians moved 4-6 % apart here). Aim: the paired ratio within 3 %.

    .venv/bin/python benchmarks/bench_fidelity.py [--rows 2000000] [--repeat 9] [--rounds 2]
        [--targets pickle,parquet,feather,duckdb,clickhouse,arcticdb,hdf5] [--strings str] [--root DIR]
        [--servers questdb,postgres,druid] [--mongo] [--start spawn] [--conditions settled,plain]

``--conditions`` (default both): each side runs under the same process conditions
(``workloads.run.processes``): ``settled``, Tickbench's default (a long-lived client's allocator,
pandas 3 string semantics), and ``plain`` (``--process plain``: glibc's and the installed pandas'
defaults, as a notebook's fresh kernel). The gap under each, and how much slower the plain direct
call is than the settled one (what a user who times the call in a fresh notebook sees).
"""
from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from workloads.datasets.schema import Scale, StringMode  # noqa: E402
from workloads.results.figures import step_figures  # noqa: E402
from workloads.run.runner import Runner  # noqa: E402
from workloads.run.warmup import more_warmup  # noqa: E402
from workloads.practitioner.paired import paired_ratio  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402
from workloads.targets.engines import default_config
from workloads.targets import make_target  # noqa: E402

TARGETS = ("pickle", "parquet", "feather", "duckdb")
USER_CALLS = TARGETS            # targets timed against a user's own call written here
_STR = pd.StringDtype(storage="pyarrow", na_value=float("nan"))


def to_pandas(table: pa.Table, strings: StringMode) -> pd.DataFrame:
    """Arrow to pandas as a user asks for each string representation."""
    options = {"date_as_object": False, "coerce_temporal_nanoseconds": True}
    if strings is StringMode.CATEGORY:
        return table.to_pandas(strings_to_categorical=True, **options)
    if strings is StringMode.ARROW:
        return table.to_pandas(types_mapper=lambda t: _STR if pa.types.is_large_string(t)
                               or pa.types.is_string(t) else None, **options)
    names = [f.name for f in table.schema if pa.types.is_large_string(f.type) or pa.types.is_string(f.type)]
    frame = table.drop_columns(names).to_pandas(**options)
    for name in names:
        frame.insert(table.schema.get_field_index(name), name,
                     pd.Series(table.column(name).to_numpy(zero_copy_only=False), dtype=object, copy=False))
    return frame


def direct_call(kind: str, target, layout, strings: StringMode):
    """The user's own call for ``kind``, with nothing of Tickbench inside it; for the other engines
    the target's own ``read_day`` (module doc)."""
    day = layout.days[0]
    if kind not in USER_CALLS:
        target.open(layout)
        return lambda: target.read_day(layout, day).frame
    if kind == "duckdb":
        path, _, table = layout.location.rpartition(":")
        con = duckdb.connect(path, read_only=True)
        sql = f'SELECT * FROM "{table}" WHERE "date" = ?'
        return lambda: to_pandas(con.sql(sql, params=[day]).to_arrow_table(), strings)
    path = target.day_path(layout, day)
    if kind == "pickle":
        def load():
            with open(path, "rb") as f:
                return pickle.load(f)
        return load
    if kind == "parquet":
        dictionary = ["symbol", "mmid"] if strings is StringMode.CATEGORY else None
        return lambda: to_pandas(pq.read_table(path, read_dictionary=dictionary), strings)
    return lambda: to_pandas(pa.ipc.open_file(path).read_all(), strings)


def _direct_process(kind: str, config: dict, rows: int, strings: str, repeat: int, process: str, out,
                    environ: dict | None = None) -> None:
    from workloads.run.processes import enter_user, preload_for
    # the conditions a Tickbench user of that --process and start runs under (workloads.run.processes):
    # settled, a long-lived client's allocator and pandas 3 strings; plain, both left at their defaults;
    # forked from the same preloaded server, or spawned
    enter_user(process, [0, 0, 0], preload_for(kind), environ)
    target = make_target(kind, config)
    layout = target.prepare("taq", Scale(days=1, rows_per_day=rows), StringMode.parse(strings))
    out.put(time_direct(direct_call(kind, target, layout, StringMode.parse(strings)), repeat))


def time_direct_fresh(kind: str, config: dict, rows: int, strings: StringMode, repeat: int,
                      process: str = "settled", start: str = "forkserver") -> list[float]:
    """``time_direct`` in a fresh process of its own, started as Tickbench's user of the same
    ``start`` is (forked from the server preloaded for ``kind``, or spawned), so that both sides run
    in alike processes (the layout exists already: it is reused)."""
    import os

    from workloads.run.processes import preload_for, user_context

    ctx = user_context(start, preload_for(kind))
    out = ctx.Queue()
    proc = ctx.Process(target=_direct_process, args=(kind, config, rows, strings.value, repeat, process, out,
                                                     dict(os.environ)))
    proc.start()
    times = out.get(timeout=600)
    proc.join()
    return times


def time_direct(call, repeat: int) -> list[float]:
    """The call in a plain loop that frees each result before the next call (a job handling one
    day at a time; Tickbench's workers do the same)."""
    warmup: list[float] = []
    while more_warmup(warmup, 1):        # warm-up, not counted: by the rule Tickbench's worker follows
        start = time.perf_counter()
        frame = call()
        warmup.append(time.perf_counter() - start)
        del frame
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        frame = call()
        times.append(time.perf_counter() - start)
        del frame
    return times


def time_engine(kind: str, config: dict, rows: int, strings: StringMode, repeat: int, process: str = "settled",
                start: str = "forkserver") -> tuple[list[float], dict]:
    """A Tickbench run of read-day on the same day: one worker, the stored measured operations."""
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "results")
        scenario = Scenario(dataset="taq", scale=Scale(days=1, rows_per_day=rows), strings=strings.value,
                            target=kind, target_config=config, workload="read-day", users=(1,),
                            operations=repeat, warmup_ops=1, probe_ops=0, process=process, start=start)
        result = Runner(scenario, store).run()
        if result.status != "completed":
            raise RuntimeError(f"{kind}: engine run {result.status}: {result.message}")
        ops = store.ops(result.run_id, kinds=("measured",))
        figures = step_figures(store, result.run_id).iloc[0].to_dict()
        store.close()
    return list(ops["total_s"]), figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of the TAQ day")
    parser.add_argument("--repeat", type=int, default=9, help="timed reads per method")
    parser.add_argument("--strings", default="str", help="object, str (pandas' default) or category")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--rounds", type=int, default=2, help="alternations of direct and Tickbench")
    parser.add_argument("--root", default="", help="folder for the layouts (default: a temp folder)")
    parser.add_argument("--servers", default="", help="local server engines to start and measure too: "
                                                      "questdb,postgres,druid")
    parser.add_argument("--start", choices=("forkserver", "spawn"), default="forkserver",
                        help="how Tickbench's user starts: forked from the preloaded server (default) or spawned")
    parser.add_argument("--conditions", default="settled,plain",
                        help="the process conditions to measure under, each for both sides: settled (Tickbench's "
                             "default) and plain (--process plain: glibc's and pandas' defaults)")
    parser.add_argument("--mongo", action="store_true", help="also the MongoDB wire-protocol stand-in "
                        "(mongo-java-server: its times are NOT MongoDB's; this measures Tickbench's overhead)")
    args = parser.parse_args(argv)
    strings = StringMode.parse(args.strings)
    root = Path(args.root or tempfile.mkdtemp(prefix="tickbench-fidelity-"))
    root.chmod(0o755)      # a local PostgreSQL started as root runs as an unprivileged user: it must enter
    kinds = [k for k in args.targets.split(",") if k]
    configs = {kind: default_config(kind, root) for kind in kinds}
    engines = start_servers(root, [k for k in args.servers.split(",") if k], args.mongo)
    for engine in engines:
        kinds.append(engine.kind)
        configs[engine.kind] = engine.config
    try:
        return measure(args, root, strings, kinds, configs)
    finally:
        stop_servers(root, engines)


def start_servers(root: Path, kinds: list[str], mongo: bool) -> list:
    engines = []
    if kinds:
        from workloads.local_engines import start_engine
        engines += [start_engine(root / "engines", kind, lambda text, kind=kind: print(f"# {kind}: {text}",
                                                                                      flush=True)) for kind in kinds]
    if mongo:
        from workloads.local_engines import mongodb
        engines.append(mongodb.start(root / "engines"))
    return engines


def stop_servers(root: Path, engines: list) -> None:
    from workloads.local_engines import stop_engine
    from workloads.local_engines.base import stop_pids
    for engine in engines:
        if engine.kind == "mongodb":
            stop_pids(engine.pids)
        else:
            stop_engine(root / "engines", engine.kind)


def measure(args, root: Path, strings: StringMode, kinds: list[str], configs: dict) -> int:
    conditions = [c for c in args.conditions.split(",") if c]
    print(f"TAQ day of {args.rows:,} rows, strings={strings.value}, {args.repeat} timed reads each "
          f"after warming up until steady; Tickbench's user {args.start}; data in {root}")
    print(f"{'target':8} {'process':8} {'method':34} {'best s':>8} {'median s':>9} {'best vs direct':>15} "
          f"{'median vs direct':>17}")
    verdicts = []
    for kind in kinds:
        config = configs[kind]
        make_target(kind, config).prepare("taq", Scale(days=1, rows_per_day=args.rows), strings)
        directs: dict[str, list[float]] = {}
        for process in conditions:
            direct, engine, first_ops, pairs = [], [], [], []
            for _ in range(args.rounds):
                round_direct = time_direct_fresh(kind, config, args.rows, strings, args.repeat, process, args.start)
                times, figures = time_engine(kind, config, args.rows, strings, args.repeat, process, args.start)
                direct += round_direct
                engine += times
                pairs.append((times, round_direct))
                first_ops.append(figures["first_op_s"])
            directs[process] = direct
            base_best, base_median = min(direct), statistics.median(direct)
            direct_name = "direct, fresh process" if kind in USER_CALLS else "target's read_day, fresh process"
            for name, values in ((direct_name, direct), ("Tickbench (stored ops)", engine)):
                best, median = min(values), statistics.median(values)
                print(f"{kind:8} {process:8} {name:34} {best:8.4f} {median:9.4f} {100 * (best / base_best - 1):+14.1f}% "
                      f"{100 * (median / base_median - 1):+16.1f}%")
            print(f"{kind:8} {process:8} {'first operation of a fresh worker':34} "
                  f"{statistics.median(first_ops):8.4f} (median of {len(first_ops)} runs: a warm-up, not in the figures)")
            gap = 100 * (statistics.median(engine) / base_median - 1)
            paired = paired_ratio(pairs)
            verdicts.append(f"{kind} ({process}): median gap {gap:+.1f}%; paired {paired} -> "
                            f"{'within' if abs(paired.ratio - 1) <= 0.03 else 'OUTSIDE'} 3%")
        if "settled" in directs and "plain" in directs:
            notebook = statistics.median(directs["plain"]) / statistics.median(directs["settled"])
            verdicts.append(f"{kind}: the direct call in a plain process takes {notebook:.2f}x the settled one's")
    print("\n".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
