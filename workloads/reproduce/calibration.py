"""Estimates calibrated on this machine: how long its gallery runs took beside what the model said.

Every completed gallery run (a card's arm, found by ``Scenario.experiment``) made on this host
gives one ratio: its wall time, created to finished as the user waited, over the model's seconds
for it (``estimate.steps_seconds``, plus its data's generation and layout when it was the first
run of that data and target here). A card's estimate is the model times the lowest and the highest
ratio of the newest runs of the same kind (workload and cache), widened by ``MARGIN``; a kind
never run here takes the range of all kinds, and at least the uncalibrated one (a card's first
upload sweep waited 3.6x its model, when every kind run before it had taken less than its model).
The ratios are kept where the runs are: the results store, per host.

What the user waits is more than the runs' own spans: the window starts each run in a process of
its own and the next one after the last has ended. Those seconds are learnt too, as the gaps
between one card run's end and the next one's start (``launch_s``): a card of n runs adds the
n - 1 gaps between them to the low end of its range and n launches to the high end.
"""
from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from workloads.scenario import parse_slot
from workloads.reproduce.estimate import UNCALIBRATED, UNCALIBRATED_BASIS, data_seconds, steps_seconds
from workloads.scenario import Scenario
from workloads.text import plural

MARGIN = 1.25          # either side of the ratios seen: a run is rarely exactly like the last
NEWEST = 20            # ratios kept per kind: the machine's recent state, not its history
LAUNCH_GAP_MAX_S = 120.0   # a longer pause between two runs of one card is the user's, not the launch's

Kind = tuple[str, str]                 # (workload, cache)


@dataclass(frozen=True)
class Calibration:
    ratios: dict[Kind, list[float]] = field(default_factory=dict)     # newest last
    host: str = ""
    launch_s: list[float] = field(default_factory=list)    # seconds between a card's runs, newest last

    @property
    def runs(self) -> int:
        return sum(len(r) for r in self.ratios.values())

    @property
    def basis(self) -> str:
        if not self.runs:
            return UNCALIBRATED_BASIS
        return f"calibrated on {plural(self.runs, 'run')} on this machine"

    def factors(self, workload: str | None = None, cache: str | None = None) -> tuple[float, float]:
        """(low, high) multipliers of the model's seconds for a run of this kind (any kind: None)."""
        seen = self.ratios.get((workload, cache)) if workload else None
        if seen:
            return min(seen) / MARGIN, max(seen) * MARGIN
        every = [r for ratios in self.ratios.values() for r in ratios]
        if not every:
            return UNCALIBRATED
        low, high = min(every) / MARGIN, max(every) * MARGIN
        if workload:        # a kind not run here yet: the model may miss what sets it apart
            low, high = min(low, UNCALIBRATED[0]), max(high, UNCALIBRATED[1])
        return low, high

    def launch(self) -> tuple[float, float]:
        """(low, high) seconds a run of a card costs beyond its own span (0, 0 before any is seen)."""
        if not self.launch_s:
            return 0.0, 0.0
        return min(self.launch_s), max(self.launch_s) * MARGIN


def calibration(store, host: str | None = None, cores: int | None = None) -> Calibration:
    """This host's gallery runs in ``store`` as ratios of wall time to the model's seconds."""
    host = host or socket.gethostname()
    cores = cores or os.cpu_count() or 1
    frame = store.frame("SELECT created_at, finished_at, scenario FROM runs WHERE status = 'completed' "
                        "AND host = ? AND finished_at IS NOT NULL ORDER BY created_at", [host])
    return calibrate(frame.itertuples(index=False), host, cores)


def calibrate(runs: Iterable[tuple[datetime, datetime, str]], host: str, cores: int) -> Calibration:
    """(created, finished, scenario JSON) of completed runs, oldest first, as a Calibration."""
    ratios: dict[Kind, list[float]] = {}
    launches: list[float] = []
    laid_out: set[tuple] = set()
    previous = None                   # (card, finished) of the last gallery run
    for created, finished, text in runs:
        data = json.loads(text) if isinstance(text, str) and text else {}
        slot = parse_slot(data.get("experiment", ""))
        if slot is None:
            continue
        card = (slot[0], slot[1], slot[3])             # report, experiment, size: one Run on a card
        if previous is not None and previous[0] == card:
            gap = (created - previous[1]).total_seconds()
            if 0 <= gap <= LAUNCH_GAP_MAX_S:
                launches.append(gap)
                del launches[:-NEWEST]
        previous = (card, finished)
        try:
            scenario = Scenario.from_dict(data)
        except (TypeError, ValueError, KeyError):
            continue                  # a run of an older version's scenario: not this model's
        data_key = (scenario.target, scenario.dataset, scenario.scale, scenario.strings)
        model = steps_seconds(scenario, cores) + (data_seconds(scenario) if data_key not in laid_out else 0.0)
        laid_out.add(data_key)
        waited = (finished - created).total_seconds()
        if model > 0 and waited > 0:
            kind = ratios.setdefault((scenario.workload, scenario.cache), [])
            kind.append(waited / model)
            del kind[:-NEWEST]
    return Calibration(ratios, host, launches)
