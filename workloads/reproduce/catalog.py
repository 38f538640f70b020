"""The report gallery as data: the five reports, each experiment they ran, and the runs (arms) that
reproduce an experiment at three sizes. Qt-free: the window's gallery and ``tickbench reproduce``
both read it.

An arm is one run. Its target is either fixed (pickle) or a *side*: "subject" is the database the
report put first (DolphinDB; here the user's choice, the embedded DuckDB by default) and
"comparator" is what the report compared it with (Druid in 001, MongoDB in 004). Every run an
arm starts carries its slot (``report/experiment/arm/size``) in ``Scenario.experiment``, so
findings are computed later from the stored runs alone.

Each experiment (and arm, where its arms differ) carries the report's method for a DolphinDB
subject (``workloads.reproduce.method``): node policy, protocol, compression and replicas as the
report's text says, each citing its section, and every experiment the job scheduling of the
reports' API (``REPORT_SCHEDULING``: parallelism 2, priority 4) unless it says otherwise. A run on
DolphinDB gets the settable ones unless the user chooses their target's own settings; the gallery
card shows where the two differ.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workloads.datasets.schema import Scale
from workloads.reproduce.method import METHOD_KIND, Setting, apply
from workloads.scenario import SIZES, Scenario
from workloads.targets.engines import default_config

# No time in the names: the card's estimate beside them says how long, measured for this machine
SIZE_TEXT = {"tiny": "tiny (a quick look)", "medium": "medium (a larger share)", "report": "the report's own scale"}
SUBJECT, COMPARATOR = "subject", "comparator"
DEFAULT_SUBJECT = "duckdb"            # the embedded default: no server needed
TINY_USERS, MEDIUM_USERS, REPORT_USERS = (1, 2, 4), (1, 2, 4, 8, 16, 32), (1, 2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True)
class Size:
    """One size of an experiment: how much data and how long each step runs."""

    scale: Scale
    duration_s: float = 0.0            # 0: the workload's own end (operations or its share of rows)
    operations: int = 0
    users: tuple[int, ...] | None = None      # None: the arm's own users
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Arm:
    key: str                   # "pickle-cold"
    label: str                 # "pickle, cold cache"
    target: str                # "pickle", or a side: SUBJECT / COMPARATOR
    workload: str
    cache: str = "warm"
    users: tuple[int, ...] = (1,)
    params: dict[str, Any] = field(default_factory=dict)
    strings: str = "object"    # report 000 decoded strings into Python objects, as pandas did then
    method: tuple[Setting, ...] = ()    # the report's method where it differs from the experiment's


@dataclass(frozen=True)
class Experiment:
    key: str                   # "day-l1"
    report: str                # "000"
    title: str
    question: str
    dataset: str
    arms: tuple[Arm, ...]
    sizes: dict[str, Size]
    needs: str = ""            # a system the report's comparison needs, in words ("a Druid")
    comparator: str = ""       # the comparator's target kind ("druid", "mongodb")
    warmup_ops: int = 1
    probe_ops: int = 2
    method: tuple[Setting, ...] = ()    # how the report drove DolphinDB (see the module doc)
    from_report: bool = True            # False: a pack of Tickbench's own, with no report's method to follow

    def method_of(self, arm: Arm) -> tuple[Setting, ...]:
        """The experiment's method with the arm's own settings over it (by key), and the reports'
        job scheduling where neither says otherwise (none for a pack of Tickbench's own)."""
        if not self.from_report:
            return arm.method
        own = {s.key for s in arm.method}
        method = tuple(s for s in self.method if s.key not in own) + arm.method
        said = {s.key for s in method}
        return method + tuple(s for s in REPORT_SCHEDULING if s.key not in said)

    def methods(self) -> list[tuple[str, tuple[Setting, ...]]]:
        """(arm label, or "" when every subject arm shares it; method) of the subject's arms."""
        arms = [a for a in self.arms if a.target == SUBJECT]
        groups = {self.method_of(a) for a in arms}
        if len(groups) <= 1:
            return [("", groups.pop())] if groups and groups != {()} else []
        return [(a.label, self.method_of(a)) for a in arms]

    @property
    def slot_prefix(self) -> str:
        return f"{self.report}/{self.key}"

    def slot(self, arm: Arm, size: str) -> str:
        return f"{self.slot_prefix}/{arm.key}/{size}"

    def scenarios(self, size: str, subject: str = DEFAULT_SUBJECT, subject_config: dict | None = None,
                  comparator: str | None = None, comparator_config: dict | None = None,
                  data_dir: str | Path | None = None, use_method: bool = True) -> list[tuple[Arm, Scenario]]:
        """The runs of this experiment at ``size``; arms on the comparator are left out when no
        comparator target is given (the gallery says what they need). Fixed local targets
        (pickle) keep their data under ``data_dir``. A DolphinDB subject runs with the report's
        method unless ``use_method`` is false (then with its config's own settings)."""
        if size not in self.sizes:
            raise ValueError(f"size must be one of {', '.join(SIZES)}, not {size!r}")
        spec = self.sizes[size]
        out = []
        for arm in self.arms:
            if arm.target == COMPARATOR and not comparator:
                continue
            target, config = {SUBJECT: (subject, subject_config), COMPARATOR: (comparator, comparator_config)
                              }.get(arm.target, (arm.target, None))
            if config is None and data_dir is not None:
                config = default_config(target, Path(data_dir))
            if arm.target == SUBJECT and target == METHOD_KIND and use_method:
                config = apply(self.method_of(arm), config)
            out.append((arm, Scenario(
                name=f"{report_card(self.report).heading} · {self.title} · {arm.label} · {size}",
                dataset=self.dataset, scale=spec.scale, strings=arm.strings, target=target,
                target_config=dict(config or {}), workload=arm.workload,
                params={**arm.params, **spec.params}, users=spec.users or arm.users, cache=arm.cache,
                operations=spec.operations, duration_s=spec.duration_s, warmup_ops=self.warmup_ops,
                probe_ops=self.probe_ops, experiment=self.slot(arm, size))))
        return out

    def arm(self, key: str) -> Arm:
        return next(a for a in self.arms if a.key == key)


@dataclass(frozen=True)
class ReportCard:
    report: str
    title: str
    asked: str
    found: tuple[str, ...]
    experiments: tuple[Experiment, ...]
    published: bool = True         # False: a pack of Tickbench's own, with no published figures
    name: str = ""                 # how the card is called ("Tick pack"); a report's is "Report 000"

    @property
    def heading(self) -> str:
        return self.name or f"Report {self.report}"

    def experiment(self, key: str) -> Experiment:
        for exp in self.experiments:
            if exp.key == key:
                return exp
        raise KeyError(f"report {self.report} has no experiment {key!r}: "
                       f"{', '.join(e.key for e in self.experiments)}")


def _sizes(tiny: Scale, medium: Scale, report: Scale, *, tiny_s: float = 1.2, medium_s: float = 10.0,
           report_ops: int = 3, users: tuple | None = None, params: tuple[dict, dict, dict] = ({}, {}, {})
           ) -> dict[str, Size]:
    """Timed steps at tiny and medium; the report's own runs counted operations."""
    tiny_u, medium_u, report_u = users or (None, None, None)
    return {"tiny": Size(tiny, duration_s=tiny_s, users=tiny_u, params=params[0]),
            "medium": Size(medium, duration_s=medium_s, users=medium_u, params=params[1]),
            "report": Size(report, operations=report_ops, users=report_u, params=params[2])}


def _bounded(tiny: Scale, medium: Scale, report: Scale, users: tuple | None = None,
             params: tuple[dict, dict, dict] = ({}, {}, {}), tiny_s: float = 0.0) -> dict[str, Size]:
    """Workloads that end on their own (a share of rows, every file once).

    ``tiny_s`` also times each tiny step: a share small enough for "under a minute" can end in
    under a second on a fast machine, and a step that short cannot be measured.
    """
    tiny_u, medium_u, report_u = users or (None, None, None)
    return {"tiny": Size(tiny, duration_s=tiny_s, users=tiny_u, params=params[0]),
            "medium": Size(medium, users=medium_u, params=params[1]),
            "report": Size(report, users=report_u, params=params[2])}


# --- how the reports drove DolphinDB (their sections cited; workloads.reproduce.method) ---------------
REPORT_SCHEDULING = (
    Setting("parallelism", 2, "the reports name none: their API sent 2, its default up to 1.30.22 and "
            "DolphinDB's default for an interactive job (its job-management tutorial); today's client sends 64"),
    Setting("priority", 4, "the reports name none: the API's default, then and now"),
)
METHOD_000 = (
    Setting("node_policy", "one", "§3.2: its script connects one session to one data node"),
    Setting("protocol", "PICKLE", "§4.1: the API of the time (1.30.0.4, §2) spoke an improved pickle "
            "protocol with the server"),
    Setting("compress", False, "§3.2: ddb.session() with its defaults, no compression"),
    Setting("replicas", 2, "§2: the database's replica count was set to 2"),
)
_COMPRESSED_DDB = Setting("protocol", "DDB", "implied by its compression: the client compresses only under "
                          "PROTOCOL_DDB (§2.2 names the API versions, no protocol)")
METHOD_002_DOWNLOAD = (
    Setting("node_policy", "random", "§5: each user connects to a data node chosen at random"),
    _COMPRESSED_DDB,
    Setting("compress", True, "§5 and §7: the transferred data was compressed (1.4-1.8 GB/s through a "
            "1 GB/s network)"),
)
METHOD_002_APPEND = (
    Setting("node_policy", "random", "§5's routing: §4 does not restate it (§2.3: the clients connect "
            "to the data nodes)"),
    _COMPRESSED_DDB,
    Setting("compress", True, "§4 and §7: the transferred data was compressed (1.8 GB/s through a "
            "1 GB/s network)"),
)
METHOD_002_BARS = (
    Setting("node_policy", "random", "§5's routing: §6 does not restate it"),
)
METHOD_003 = (Setting("replicas", 2, "§2.2: two replicas of the data"),)


def _read_arms(columns: str = "all") -> tuple[Arm, ...]:
    params = {} if columns == "all" else {"columns": columns}
    suffix = "" if columns == "all" else f", {columns}"
    return tuple(Arm(f"{who}-{cache}", f"{name}, {cache} cache{suffix}", target, "read-day", cache, params=params)
                 for who, name, target in (("pickle", "pickle", "pickle"), ("db", "database API", SUBJECT))
                 for cache in ("cold", "warm"))


_L1 = _sizes(Scale(days=2, rows_per_day=200_000, symbols=200), Scale(days=3, rows_per_day=5_000_000),
             Scale(days=1, rows_per_day=230_000_000, symbols=8_000, start="2007-08-23"))
_L2 = _sizes(Scale(days=2, rows_per_day=30_000, symbols=100), Scale(days=3, rows_per_day=1_000_000),
             Scale(days=3, rows_per_day=21_700_000, symbols=4_000, start="2019-09-10"))
_SWEEP_USERS = (TINY_USERS, MEDIUM_USERS, REPORT_USERS)

REPORT_000 = ReportCard(
    "000", "DolphinDB vs pickle: one trading day into pandas",
    "How long does it take to get one trading day into a pandas DataFrame: a server-side query, "
    "the database's Python API, or pickle.load of a file?",
    ("The API is dominated (~80 %) by client-side deserialization: 35 s against 6 s on the server.",
     "Pickle is disk-bound cold (72 s) and CPU-bound warm (34 s).",
     "The two string columns are ~20 % of the bytes but ~50 % of the decode time.",
     "Three readers on one disk: pickle takes about three times as long per reader."),
    (Experiment("day-l1", "000", "a day, L1 quotes", "Pickle vs the database API vs the server-side query, "
                "cold and warm, on a day of US TAQ quotes (10 columns).", "taq", _read_arms(), _L1,
                method=METHOD_000),
     Experiment("day-l2", "000", "a day, L2 snapshots", "The same on a day of level-2 snapshots (78 columns).",
                "level2", _read_arms(), _L2, method=METHOD_000),
     Experiment("strings", "000", "without the two string columns", "The same reads without the two string "
                "columns: how much of the time do strings cost?", "taq", _read_arms("without strings"), _L1,
                method=METHOD_000),
     Experiment("readers", "000", "three readers, three days", "Three concurrent readers of three different "
                "L2 days, against one reader alone: all on one data node, and each on a different node.",
                "level2",
                (Arm("pickle-3", "pickle, 1 and 3 readers", "pickle", "read-day", "cold", users=(1, 3)),
                 Arm("db-3", "database API, 1 and 3 readers on one node", SUBJECT, "read-day", "cold", users=(1, 3),
                     method=(Setting("node_policy", "one", "§4.3: the three connections on the local "
                                     "server's data node"),)),
                 Arm("db-3-nodes", "database API, 1 and 3 readers on different nodes", SUBJECT, "read-day",
                     "cold", users=(1, 3),
                     method=(Setting("node_policy", "round_robin", "§4.3: the three connections on data nodes "
                                     "of three different servers"),))),
                _sizes(Scale(days=3, rows_per_day=30_000, symbols=100), Scale(days=3, rows_per_day=1_000_000),
                       Scale(days=3, rows_per_day=21_700_000, symbols=4_000, start="2019-09-10"),
                       report_ops=1), method=METHOD_000)),
)

_TAQ_SMALL = (Scale(days=2, rows_per_day=100_000, symbols=100), Scale(days=4, rows_per_day=2_000_000),
              Scale(days=23, rows_per_day=285_000_000, symbols=8_000, start="2007-08-01"))
REPORT_001 = ReportCard(
    "001", "DolphinDB vs Druid: import, seven queries, disk",
    "Which loads a month of TAQ quotes faster, answers filters and group-bys faster, and takes less disk?",
    ("Import about 30× faster than Druid.", "Queries 3–30× faster, about 10× typical.",
     "Static disk about 80 % larger than Druid's (BID/OFR compress to 20 % vs 5 %)."),
    (Experiment("import", "001", "import", "Bulk-load the daily CSV files into each database.", "taq",
                (Arm("subject", "database, import", SUBJECT, "import"),
                 Arm("comparator", "comparator, import", COMPARATOR, "import")),
                _bounded(*_TAQ_SMALL), needs="a Druid (a configured one, or the local Druid engine)",
                comparator="druid", warmup_ops=0, probe_ops=0),
     Experiment("queries", "001", "seven queries and footprint", "The seven queries, 10 runs each, and the "
                "laid-out table's size on disk.", "taq",
                (Arm("subject", "database, seven queries", SUBJECT, "query-suite", params={"suite": "taq001"}),
                 Arm("comparator", "comparator, seven queries", COMPARATOR, "query-suite", params={"suite": "taq001"})),
                _bounded(*_TAQ_SMALL, params=({"repetitions": 3}, {"repetitions": 10}, {"repetitions": 10})),
                needs="a Druid (a configured one, or the local Druid engine)", comparator="druid",
                warmup_ops=0, probe_ops=0)),
)

_API45 = (Scale(days=1, rows_per_day=100_000, symbols=100), Scale(days=1, rows_per_day=1_000_000),
          Scale(days=1, rows_per_day=1_000_000))
_TAQ_SWEEP = (Scale(days=2, rows_per_day=200_000, symbols=100), Scale(days=5, rows_per_day=2_000_000),
              Scale(days=1250, rows_per_day=10_000_000, symbols=8_000))
REPORT_002 = ReportCard(
    "002", "DolphinDB API performance: uploads, appends, downloads, minute bars",
    "How fast does a client upload, append, download and compute minute bars, from 1 to 128 users?",
    ("Uploads peak at 160–200 MB/s from Python (C++ 403 MB/s); small batches are slow.",
     "Concurrent appends grow about linearly to 16–32 users, then the network caps them (~1.8 GB/s).",
     "Downloads and minute bars peak at 64 users and drop at 128."),
    (Experiment("upload", "002", "upload batch-size sweep", "One user uploads rows in batches of 10 to "
                "100,000 rows.", "api45", (Arm("subject", "database, upload sweep", SUBJECT, "upload-sweep"),),
                _bounded(*_API45, params=({"batch_sizes": [100, 1000, 10000], "rows_per_step": 10_000},
                                          {"batch_sizes": [10, 100, 1000, 10000, 100000], "rows_per_step": 200_000},
                                          {"batch_sizes": [10, 100, 1000, 10000, 100000],
                                           "rows_per_step": 1_000_000})), warmup_ops=0, probe_ops=0),
     Experiment("append", "002", "concurrent appends", "1..128 users each append rows in 25,000-row batches.",
                "api45", (Arm("subject", "database, concurrent appends", SUBJECT, "concurrent-append"),),
                _bounded(*_API45, users=_SWEEP_USERS,
                         params=({"rows_per_user": 2_000_000, "batch_rows": 10_000},
                                 {"rows_per_user": 500_000, "batch_rows": 25_000},
                                 {"rows_per_user": 5_000_000, "batch_rows": 25_000}), tiny_s=1.2),
                warmup_ops=0, probe_ops=0, method=METHOD_002_APPEND),
     Experiment("download", "002", "concurrent slice downloads", "1..128 users each download random "
                "(day, symbol) slices.", "taq",
                (Arm("subject", "database, slice downloads", SUBJECT, "slice-download"),),
                _bounded(*_TAQ_SWEEP, users=_SWEEP_USERS,
                         params=({"rows_per_user": 5_000_000}, {"rows_per_user": 5_000_000},
                                 {"rows_per_user": 5_000_000}), tiny_s=1.2), method=METHOD_002_DOWNLOAD),
     Experiment("bars", "002", "concurrent minute bars", "1..128 users each ask for one stock-day's minute "
                "bars.", "taq", (Arm("subject", "database, minute bars", SUBJECT, "minute-bars"),),
                _sizes(*_TAQ_SWEEP, users=_SWEEP_USERS, tiny_s=1.2, medium_s=8.0, report_ops=10),
                method=METHOD_002_BARS)),
)

_TAQ_003 = (Scale(days=3, rows_per_day=100_000, symbols=100), Scale(days=5, rows_per_day=2_000_000),
            Scale(days=21, rows_per_day=310_000_000, symbols=8_000, start="2007-08-01"))
REPORT_003 = ReportCard(
    "003", "DolphinDB horizontal scaling: 2, 4, 6 and 8 data nodes",
    "How do writes, reads and computations scale as data nodes are added?",
    ("Writes scale with nodes: 4.7 M rows/s on 2 nodes to 14.6 M on 8 (dataSync=1).",
     "Reads at 128 users: 10 M rows/s on 2 nodes, 36.5 M on 8; 1 user is fastest on 2 nodes.",
     "Computations speed up 3–4× from 2 to 8 nodes, and warm runs are 1.4–5× faster than cold."),
    (Experiment("write", "003", "write throughput", "Writer threads append 200,000-row batches.", "taq",
                (Arm("subject", "database, concurrent writes", SUBJECT, "concurrent-append"),),
                _bounded(*_TAQ_003, users=((1, 2), (1, 2, 4, 8, 16), (16, 32, 48, 64)),
                         params=({"rows_per_user": 100_000, "batch_rows": 50_000},
                                 {"rows_per_user": 1_000_000, "batch_rows": 200_000},
                                 {"rows_per_user": 100_000_000, "batch_rows": 200_000})), warmup_ops=0, probe_ops=0,
                method=METHOD_003),
     Experiment("read", "003", "read users sweep", "Users fetch random stock-days, caches dropped.", "taq",
                (Arm("subject", "database, reads, cold", SUBJECT, "slice-download", "cold"),),
                _bounded(*_TAQ_003, users=_SWEEP_USERS,
                         params=({"rows_per_user": 300_000}, {"rows_per_user": 5_000_000},
                                 {"rows_per_user": 100_000_000})), method=METHOD_003),
     Experiment("compute", "003", "the three computations", "Spread by minute, map-reduce minute bars and a "
                "distributed OLS, cold and warm.", "taq",
                tuple(Arm(f"{w}-{c}", f"{t}, {c} cache", SUBJECT, w, c)
                      for w, t in (("spread-by-minute", "spread by minute"),
                                   ("mapreduce-minute-bars", "map-reduce minute bars"), ("ols-spread", "OLS"))
                      for c in ("cold", "warm")),
                _sizes(*_TAQ_003, tiny_s=1.0, medium_s=6.0, report_ops=3), method=METHOD_003)),
)

_DEVICES = (Scale(days=2, rows_per_day=20_000, symbols=100), Scale(days=4, rows_per_day=1_000_000, symbols=3_000),
            Scale(days=4, rows_per_day=7_500_000, symbols=3_000, start="2016-11-15"))
_TAQ_004 = (Scale(days=2, rows_per_day=50_000, symbols=100), Scale(days=4, rows_per_day=2_000_000),
            Scale(days=4, rows_per_day=400_000_000, symbols=8_000, start="2007-08-07"))


def _004(dataset: str, suite: str, sizes: tuple[Scale, Scale, Scale]) -> Experiment:
    arms = tuple(Arm(f"{side}-{w}", f"{'database' if side == SUBJECT else 'comparator'}, {w}", side, w,
                     params={"suite": suite, "repetitions": 3} if w == "query-suite" else {})
                 for w in ("import", "export", "query-suite") for side in (SUBJECT, COMPARATOR))
    title = "devices" if dataset == "devices" else "TAQ"
    return Experiment(dataset, "004", f"{title}: import, export, disk, queries",
                      f"Import, export, footprint and the query suite on the {title} data.", dataset, arms,
                      _bounded(*sizes),
                      needs="a MongoDB server of yours (Add server… → MongoDB): Tickbench cannot start one here",
                      comparator="mongodb", warmup_ops=0, probe_ops=0)


REPORT_004 = ReportCard(
    "004", "DolphinDB vs MongoDB: import, export, disk and queries",
    "On device readings and on TAQ quotes, which imports, exports and answers faster, and takes less disk?",
    ("Import 57× faster on devices (63 s vs about an hour), ~290× on TAQ.", "Export about 50× faster.",
     "MongoDB takes 2–3× the disk.", "Most queries several to 30× faster; slower only on two point queries."),
    (_004("devices", "devices004", _DEVICES), _004("taq", "taq004", _TAQ_004)),
)

REPORTS: dict[str, ReportCard] = {r.report: r for r in (REPORT_000, REPORT_001, REPORT_002, REPORT_003, REPORT_004)}

# --- the tick pack: Tickbench's own card, no published figures ---------------------------------------
_TICK = {"tiny": Size(Scale(days=2, rows_per_day=100_000, symbols=100), duration_s=1.2, users=TINY_USERS),
         "medium": Size(Scale(days=5, rows_per_day=2_000_000), duration_s=6.0, users=(1, 2, 4, 8))}
_TICK_QUESTIONS = (
    ("asof-join", "as-of join", "Each trade of a day with the quote prevailing at its time."),
    ("vwap", "VWAP over 5-minute buckets", "VWAP, volume and trades per symbol in each 5-minute bucket of a day."),
    ("snapshot", "market snapshot", "The last quote of every symbol at 12:00 of a day."),
    ("year-high-bid", "year-high bid", "The highest bid of each symbol over all the days."),
    ("rolling-mid", "rolling mid", "The 1-minute moving average of the mid of the 5 most active symbols."),
)
BASELINE = "parquet"               # what a desk keeps ticks in before a database: Parquet files, read with pandas
TICK_PACK = ReportCard(
    "tick", "quotes and trades, the questions a desk asks every day",
    "How fast does your database answer an as-of join, VWAP buckets, a market snapshot, a year-high bid and a "
    "rolling mid, beside Parquet files read with pandas, from 1 to N users?",
    ("No published figures: the pack is Tickbench's own (STAC-M3 asks such questions, for its members only).",
     "Its findings are measured here: Parquet's time over the database's for each question, with a 95 % "
     "interval; tickbench verify --dataset taq --suite tick checks that both give the same answers."),
    tuple(Experiment(key, "tick", title, question, "taq",
                     (Arm("db", f"database, {title}", SUBJECT, key, users=TINY_USERS, strings="str"),
                      Arm("files", f"Parquet files, {title}", BASELINE, key, users=TINY_USERS, strings="str")),
                     _TICK, warmup_ops=1, probe_ops=0, from_report=False)
          for key, title, question in _TICK_QUESTIONS),
    published=False, name="Tick pack")
GALLERY: dict[str, ReportCard] = {**REPORTS, TICK_PACK.report: TICK_PACK}


def report_card(report: str) -> ReportCard:
    try:
        return GALLERY[report]
    except KeyError:
        raise ValueError(f"no report {report!r}: choose one of {', '.join(GALLERY)}") from None


def gallery_scenarios(reports: list[str] | None = None, size: str = "tiny",
                      data_dir: str | Path | None = None) -> list[Scenario]:
    """Every run of these reports at ``size`` on the embedded default, comparator sides left out
    (the demo playlist "the five reports")."""
    return [scenario for report in (reports or list(REPORTS)) for exp in report_card(report).experiments
            for _arm, scenario in exp.scenarios(size, data_dir=data_dir)]
