"""What an experiment will cost on this machine before it starts: time, memory and disk.

The model: rates measured on this project's 2-core build machine (``benchmarks/bench_generator.py``,
``benchmarks/bench_engines.py``; README tables), scaled by the data's size and this machine's
cores. The time is shown as a range: the model times the ratios this machine's own gallery runs
gave (``workloads.reproduce.calibration``), or a wide uncalibrated range before it has any.
Good to tell "a minute" from "an hour" from "two days and 1 TB", which is what a person needs
before pressing Run; ``benchmarks/bench_estimates.py`` runs each tiny card against its range.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from workloads.datasets import get_dataset
from workloads.datasets.base import side_tables
from workloads.datasets.taq_trades import QUOTES_PER_TRADE
from workloads.reproduce.catalog import Experiment
from workloads.scenario import Scenario
from workloads.text import plural
from workloads.run.warmup import expected_warmup_ops

GENERATE_ROWS_PER_S = 8e6          # bench_generator: 7-11 M rows/s on one core
LOAD_ROWS_PER_S = 1e6              # bench_engines: a target's layout / import, CSV ~60-160 MB/s
DECODE_BYTES_PER_S = 300e6         # a day into pandas: 30-110 ms per 1 M TAQ rows
START_S = 3.0                      # a step's worker processes: start, connect, warm up, probe
# a cold step clears the caches before each round of its users' operations (workloads.run.cold): report
# 003's tiny cold slice sweep spent 33-36 ms a round with 1 and 2 users on 2 cores, beside ~9 ms slices
COLD_ROUND_S = 0.035
DISK_FACTOR = {"pickle": 1.6, "feather": 2.3, "parquet": 0.7, "csv": 1.35}   # on disk / logical bytes
MEMORY_FACTOR = 3.0                # a day in pandas with object strings, and its copy while laid out
# before this machine has a gallery run: the build machine's runs took 0.6-1.6x the model quiet and
# up to 15x with two busy processes beside them (issue 26); the range says "minutes, not hours"
UNCALIBRATED = (0.5, 4.0)
UNCALIBRATED_BASIS = "not yet calibrated on this machine: a card run calibrates it"


@dataclass(frozen=True)
class Estimate:
    seconds: float                 # the model's figure
    memory_bytes: float
    disk_bytes: float
    fits: bool                     # memory and disk fit this machine
    warning: str = ""
    low_s: float = 0.0             # the range a wait should fall in (calibrated on this machine's runs)
    high_s: float = 0.0
    basis: str = ""                # "calibrated on 12 runs on this machine", or why not

    @property
    def duration(self) -> str:
        if not self.high_s:
            return f"about {duration_text(self.seconds)}"
        low, high = duration_text(self.low_s), duration_text(self.high_s)
        return f"{low} to {high}" if low != high else f"about {low}"

    @property
    def text(self) -> str:
        basis = f" ({self.basis})" if self.basis else ""
        return (f"{self.duration}{basis}, {size_text(self.memory_bytes)} memory, "
                f"{size_text(self.disk_bytes)} disk") + (f" — {self.warning}" if self.warning else "")


def duration_text(seconds: float) -> str:
    if seconds < 90:
        return plural(max(1, round(seconds)), "second")
    if seconds < 5400:
        return plural(round(seconds / 60), "minute")
    if seconds < 48 * 3600:
        return plural(round(seconds / 3600), "hour")
    return plural(round(seconds / 86400), "day")


def size_text(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{max(n / 1e6, 0.01):.2g} MB"


def steps_seconds(scenario: Scenario, cores: int) -> float:
    """The model's seconds for one run's steps: its workers' start, warm-up, probes and operations
    (not its data's generation and layout: ``data_seconds``)."""
    scale = scenario.scale
    rows = scale.days * scale.rows_per_day
    op_s = scale.rows_per_day * get_dataset(scenario.dataset).info.schema.row_bytes() / DECODE_BYTES_PER_S
    seconds = 0.0
    for users in scenario.users:
        share = max(1.0, users / cores)
        warmups = expected_warmup_ops(scenario.warmup_ops, op_s, scenario.cache == "cold")
        if scenario.duration_s:
            seconds += START_S + scenario.duration_s + op_s * (warmups + scenario.probe_ops) * share
        elif scenario.workload in ("import", "export"):
            seconds += START_S + 2 * rows / LOAD_ROWS_PER_S
        elif "rows_per_user" in scenario.params:
            seconds += START_S + scenario.params["rows_per_user"] * users / LOAD_ROWS_PER_S
            if scenario.cache == "cold":        # a round per slice: a key-day's rows each
                rounds = scenario.params["rows_per_user"] / max(1.0, scale.rows_per_day / max(1, scale.symbols))
                seconds += rounds * COLD_ROUND_S * share
        else:
            operations = max(1, scenario.operations or 3)
            seconds += START_S + op_s * (operations + warmups) * share
            if scenario.cache == "cold":
                seconds += operations * COLD_ROUND_S * share
    return seconds


def data_seconds(scenario: Scenario, generate: bool = True) -> float:
    """The model's seconds to generate a run's data (``generate``) and lay it out on its target,
    with TAQ's trades: drawn from the quotes generated again on each target, a row per eight."""
    rows = scenario.scale.days * scenario.scale.rows_per_day
    seconds = (rows / GENERATE_ROWS_PER_S if generate else 0.0) + rows / LOAD_ROWS_PER_S
    if "trades" in side_tables(get_dataset(scenario.dataset)):
        seconds += rows / GENERATE_ROWS_PER_S + rows / QUOTES_PER_TRADE / LOAD_ROWS_PER_S
    return seconds


def estimate(experiment: Experiment, size: str, subject: str = "duckdb", data_dir: str | Path | None = None,
             cores: int | None = None, memory_bytes: float | None = None,
             comparator: str | None | bool = True, calibration=None) -> Estimate:
    """``comparator``: the comparator's kind, None to leave its side out, True (the default) to
    count it as the experiment's own comparator (``tickbench reproduce --list``). ``calibration``:
    this machine's measured runs beside the model (``workloads.reproduce.calibration``); without
    one, the uncalibrated range."""
    import psutil

    spec = experiment.sizes[size]
    scale = spec.scale
    rows = scale.days * scale.rows_per_day
    row_bytes = get_dataset(experiment.dataset).info.schema.row_bytes()
    logical = rows * row_bytes
    cores = cores or os.cpu_count() or 1
    if comparator is True:
        comparator = experiment.comparator or None
    arms = experiment.scenarios(size, subject=subject, comparator=comparator)
    targets = {scenario.target for _, scenario in arms}
    csv = any(s.workload in ("import", "export") for _, s in arms)
    disk = sum(logical * DISK_FACTOR.get(t, 1.0) for t in targets) + (logical * DISK_FACTOR["csv"] if csv else 0)
    top_users = max(max(s.users) for _, s in arms)
    day = scale.rows_per_day * row_bytes * MEMORY_FACTOR
    memory = day * (1 + min(top_users, 8))        # the generator's day, and each reader's
    prepare = data_seconds(arms[0][1]) + (len(targets) - 1) * data_seconds(arms[0][1], generate=False)
    factors = calibration.factors if calibration is not None else (lambda *_kind: UNCALIBRATED)
    low, high = (prepare * f for f in factors())
    seconds = prepare
    for _, scenario in arms:
        model = steps_seconds(scenario, cores)
        seconds += model
        lo, hi = factors(scenario.workload, scenario.cache)
        low, high = low + model * lo, high + model * hi
    if calibration is not None:          # each run's start in its own process, learnt on this machine
        # as the gaps between a card's runs: n runs wait at least the n - 1 between them, and at
        # most a launch each (the first one's start and the last one's end are not in the store)
        launch_low, launch_high = calibration.launch()
        low, high = low + (len(arms) - 1) * launch_low, high + len(arms) * launch_high
    available_memory = memory_bytes or psutil.virtual_memory().total
    free_disk = shutil.disk_usage(data_dir).free if data_dir and Path(data_dir).exists() else None
    warnings = []
    if memory > available_memory:
        warnings.append(f"needs more memory than this machine has ({size_text(available_memory)})")
    if free_disk is not None and disk > free_disk:
        warnings.append(f"needs more disk than is free ({size_text(free_disk)})")
    basis = calibration.basis if calibration is not None else UNCALIBRATED_BASIS
    return Estimate(seconds, memory, disk, not warnings, "; ".join(warnings), low, high, basis)


def together(estimates: list[Estimate]) -> Estimate:
    """Experiments run one after another, as one estimate: their waits and disk added, the largest
    memory (one runs at a time), every warning."""
    if not estimates:
        raise ValueError("no experiments to estimate")
    warnings = list(dict.fromkeys(e.warning for e in estimates if e.warning))
    return Estimate(sum(e.seconds for e in estimates), max(e.memory_bytes for e in estimates),
                    sum(e.disk_bytes for e in estimates), all(e.fits for e in estimates), "; ".join(warnings),
                    sum(e.low_s for e in estimates), sum(e.high_s for e in estimates), estimates[0].basis)
