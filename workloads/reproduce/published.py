"""Published figures beside measured ones, experiment by experiment.

Each pair puts one figure of a report (``workloads.results.references``) beside the figure of the gallery
run that measured the same thing on this machine: a day's load time by target and cache, the
server-side part, a users sweep's throughput at the same user counts, an import's time. Pairs
say "published (their hardware)" and "measured (this machine)"; they never divide one by the
other: different hardware makes absolute ratios meaningless (the findings carry the ratios).
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.results.references import Reference, references_for
from workloads.reproduce.catalog import ReportCard
from workloads.reproduce.measured import ArmRun

_UNIT_SCALE = {"s": 1.0, "ms": 1e-3, "M rows/s": 1e6, "MB/s": 1e6, "GB/s": 1e9}


@dataclass(frozen=True)
class Pair:
    experiment: str            # the experiment's title
    figure: str                # what is compared: "pickle, cold cache"
    published: str             # "72 s"
    measured: str              # "0.21 s" or "—"
    unit: str                  # the published unit
    published_value: float     # in the published unit
    measured_value: float | None    # in the same unit
    hardware: str              # the report's environment
    run_id: str = ""
    applies: bool = True       # False: a DolphinDB-only figure, one greyed row when the database is another


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}"


def _pair(experiment: str, figure: str, ref: Reference, arm: ArmRun | None, base_value: float | None) -> Pair:
    measured = None if base_value is None else base_value / _UNIT_SCALE[ref.unit]
    return Pair(experiment, figure, ref.value_text, _fmt(measured, ref.unit), ref.unit, ref.value, measured,
                ref.environment, arm.run_id if arm else "")


def _read_day_pairs(title: str, dataset: str, series: str, experiment: str, runs) -> list[Pair]:
    out = []
    for ref in references_for("read-day", dataset=dataset):
        if ref.series != series or ref.cache is None or ref.unit != "s":
            continue
        if ref.target == "pickle":
            arm = runs.get((experiment, f"pickle-{ref.cache}"))
            value, figure = (arm.seconds(1) if arm else None), f"pickle.load, {ref.cache} cache"
        elif ref.target == "dolphindb-api-python":
            arm = runs.get((experiment, f"db-{ref.cache}"))
            value, figure = (arm.seconds(1) if arm else None), f"the database's Python API, {ref.cache} cache"
        elif ref.target == "dolphindb-server":
            arm = runs.get((experiment, f"db-{ref.cache}"))
            value, figure = (arm.server_seconds(1) if arm else None), f"the server-side query, {ref.cache} cache"
        else:
            continue
        out.append(_pair(title, figure, ref, arm, value))
    return out


def _readers_pairs(title: str, runs) -> list[Pair]:
    out = []
    for ref in references_for("read-day", dataset="level2"):
        if not ref.series.startswith("3 concurrent readers") or not ref.series.endswith("connection 1"):
            continue
        # the report's API readers were all on one data node, or each on another server's (§4.3)
        side = "pickle-3" if ref.target == "pickle" else ("db-3-nodes" if "different" in ref.series else "db-3")
        arm = runs.get(("readers", side))
        series = ref.series.removesuffix(", connection 1")
        out.append(_pair(title, f"{series}, per reader (published: the first reader's)", ref, arm,
                         arm.seconds(3) if arm else None))
    return out


def _sweep_pairs(title: str, report: str, workload: str, dataset: str, experiment: str, runs,
                 series_filter=None) -> list[Pair]:
    """The run's step at each published user count of this report's own figures (another report
    on the same workload is its own card's)."""
    arm = runs.get((experiment, "subject"))
    steps = {s.users: s for s in arm.answer.steps} if arm else {}
    out = []
    for ref in references_for(workload, dataset=dataset):
        if ref.report != report or ref.x_unit != "users" or ref.unit not in ("M rows/s", "MB/s", "GB/s"):
            continue
        if series_filter and not series_filter(ref):
            continue
        step = steps.get(int(ref.x))
        if arm is not None and step is None:
            continue            # beyond this run's sweep: a row of dashes says nothing
        value = None
        if step is not None:
            value = step.rows_per_s if ref.unit == "M rows/s" else (step.mb_per_s or 0) * 1e6
        out.append(_pair(title, f"{ref.series}, {ref.x_text}", ref, arm, value))
    return out


def _peak_pairs(title: str, workload: str, dataset: str, experiment: str, runs, targets: tuple[str, ...]) -> list[Pair]:
    arm = runs.get((experiment, "subject"))
    # the peak of the steps long enough to measure, over the batch sizes this sweep had
    sizes = [int(b) for b in ((arm.scenario.get("params") or {}).get("batch_sizes") or ())] if arm else []
    yours = f"; yours over {min(sizes):,}..{max(sizes):,}, steps too short to measure left out" if sizes else ""
    out = []
    for ref in references_for(workload, dataset=dataset):
        if ref.target not in targets or ref.unit not in ("MB/s", "GB/s"):
            continue
        peak = arm.peak("mb_per_s", measured_only=True) if arm else None
        out.append(_pair(title, f"peak, {ref.target}: {ref.series}{yours}", ref, arm, peak * 1e6 if peak else None))
    return out


def _compute_pairs(title: str, runs) -> list[Pair]:
    out = []
    for workload in ("spread-by-minute", "mapreduce-minute-bars", "ols-spread"):
        for ref in references_for(workload, dataset="taq"):
            if ref.unit != "ms" or ref.x != 2:
                continue
            arm = runs.get(("compute", f"{workload}-{ref.cache}"))
            out.append(_pair(title, f"{workload}, {ref.cache} cache (published: 2 nodes)", ref, arm,
                             arm.seconds() if arm else None))
    return out


def _write_pairs(title: str, runs) -> list[Pair]:
    """003's write throughput at each published cluster size beside the run's peak rows/s: on a
    cluster, the published figure of its own number of data nodes; elsewhere the smallest (2)."""
    arm = runs.get(("write", "subject"))
    nodes = arm.data_nodes() if arm else None
    refs = [r for r in references_for("concurrent-append", dataset="taq")
            if r.x_unit == "nodes" and r.unit == "M rows/s" and r.series == "dataSync=1"]
    chosen = [r for r in refs if r.x == nodes] or [r for r in refs if r.x == min(r.x for r in refs)]
    peak = arm.peak("rows_per_s") if arm else None
    return [_pair(title, f"peak rows/s (published: {r.x_text}, {r.series})", r, arm, peak)
            for r in chosen]


def _read_sweep_pairs(title: str, runs) -> list[Pair]:
    """003's read sweep beside one published cluster: the run's own number of data nodes, else the
    smallest (2), so that one measured figure is never repeated beside every cluster size."""
    arm = runs.get(("read", "subject"))
    nodes = arm.data_nodes() if arm else None
    sizes = {int(r.series.split()[0]) for r in references_for("slice-download", dataset="taq")
             if r.report == "003" and r.series.endswith(" nodes")}
    chosen = f"{nodes if nodes in sizes else min(sizes)} nodes"
    return _sweep_pairs(title, "003", "slice-download", "taq", "read", runs,
                        lambda r: r.series == chosen and r.unit == "M rows/s")


def _transfer_pairs(title: str, experiment: str, dataset: str, runs) -> list[Pair]:
    out = []
    for workload in ("import", "export"):
        for ref in references_for(workload, dataset=dataset):
            if ref.unit != "s" or "index" in ref.series:
                continue
            side = "subject" if ref.target.startswith("dolphindb") else "comparator"
            arm = runs.get((experiment, f"{side}-{workload}"))
            out.append(_pair(title, f"{workload}, {ref.target}: {ref.series}", ref, arm,
                             arm.window_seconds() if arm else None))
    return out


def pairs(card: ReportCard, runs) -> list[Pair]:
    """Every published figure of the report that a gallery run measures, beside its measured value
    (— where that run has not been made at this size)."""
    titles = {e.key: e.title for e in card.experiments}
    if card.report == "000":
        return _dolphindb_only(_read_day_pairs(titles["day-l1"], "taq", "all columns", "day-l1", runs)
                               + _read_day_pairs(titles["day-l2"], "level2", "all columns", "day-l2", runs)
                               + _read_day_pairs(titles["strings"], "taq", "without the two string columns",
                                                 "strings", runs)
                               + _readers_pairs(titles["readers"], runs), runs)
    if card.report == "002":
        return (_peak_pairs(titles["upload"], "upload-sweep", "api45", "upload", runs, ("dolphindb-api-python",))
                + _peak_pairs(titles["append"], "concurrent-append", "api45", "append", runs, ("dolphindb-api",))
                + _sweep_pairs(titles["download"], "002", "slice-download", "taq", "download", runs)
                + _sweep_pairs(titles["bars"], "002", "minute-bars", "taq", "bars", runs))
    if card.report == "003":
        return (_write_pairs(titles["write"], runs)
                + _read_sweep_pairs(titles["read"], runs)
                + _compute_pairs(titles["compute"], runs))
    if card.report == "004":
        return _transfer_pairs(titles["devices"], "devices", "devices", runs) + \
            _transfer_pairs(titles["taq"], "taq", "taq", runs)
    return []       # report 001 published ratios only: its findings carry them


# figures that only mean something on DolphinDB: its server-side part of a query, and where its
# readers' connections land (one data node, or one on each server's)
_DOLPHINDB_ONLY = ("the server-side query", "each on a different server's node")
_LOCAL_NODE = ", all on the local data node"


def _dolphindb_only(found: list[Pair], runs) -> list[Pair]:
    """``found`` as it stands when the database arms ran on DolphinDB (or have not run); on another
    database, the DolphinDB-only figures leave the measured rows for one greyed row that names
    them, and the readers' row drops the data node it cannot have."""
    kinds = {str(arm.scenario.get("target") or "") for (_exp, key), arm in runs.items() if key.startswith("db-")}
    other = sorted(k for k in kinds if k and k != "dolphindb")
    if not other or "dolphindb" in kinds:
        return found
    only = [p for p in found if any(words in p.figure for words in _DOLPHINDB_ONLY)]
    kept = [p if _LOCAL_NODE not in p.figure else
            Pair(p.experiment, p.figure.replace(_LOCAL_NODE, ""), p.published, p.measured, p.unit,
                 p.published_value, p.measured_value, p.hardware, p.run_id) for p in found if p not in only]
    if not only:
        return kept
    named = sorted({("the server-side query" if "server-side" in p.figure else
                     "readers each on a different server's node") for p in only})
    published = ", ".join(dict.fromkeys(p.published for p in only))
    return kept + [Pair("DolphinDB only", f"{' and '.join(named)}: the chosen database is {', '.join(other)}, "
                        "which has neither; not measured here", published, "not applicable", only[0].unit,
                        only[0].published_value, None, only[0].hardware, applies=False)]
