"""Estimates calibrated on this machine: how long its gallery runs took beside what the model said.

Every completed gallery run (a card's arm, found by ``Scenario.experiment``) made on this host
gives one ratio: its wall time, created to finished as the user waited, over the model's seconds
for it (``estimate.steps_seconds``, plus its data's generation and layout when it was the first
run of that data and target here). A card's estimate is the model times the lowest and the highest
ratio of the newest runs of the same kind (workload and cache), widened by ``MARGIN``; a kind
never run here takes the range of all kinds. The ratios are kept where the runs are: the results
store, per host.
"""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field

from workloads.reproduce.catalog import parse_slot
from workloads.reproduce.estimate import UNCALIBRATED, UNCALIBRATED_BASIS, data_seconds, steps_seconds
from workloads.scenario import Scenario
from workloads.text import plural

MARGIN = 1.25          # either side of the ratios seen: a run is rarely exactly like the last
NEWEST = 20            # ratios kept per kind: the machine's recent state, not its history

Kind = tuple[str, str]                 # (workload, cache)


@dataclass(frozen=True)
class Calibration:
    ratios: dict[Kind, list[float]] = field(default_factory=dict)     # newest last
    host: str = ""

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
        if not seen:
            seen = [r for ratios in self.ratios.values() for r in ratios]
        if not seen:
            return UNCALIBRATED
        return min(seen) / MARGIN, max(seen) * MARGIN


def calibration(store, host: str | None = None, cores: int | None = None) -> Calibration:
    """This host's gallery runs in ``store`` as ratios of wall time to the model's seconds."""
    host = host or socket.gethostname()
    cores = cores or os.cpu_count() or 1
    frame = store.frame("SELECT created_at, finished_at, scenario FROM runs WHERE status = 'completed' "
                        "AND host = ? AND finished_at IS NOT NULL ORDER BY created_at", [host])
    ratios: dict[Kind, list[float]] = {}
    laid_out: set[tuple] = set()
    for created, finished, text in frame.itertuples(index=False):
        data = json.loads(text) if isinstance(text, str) and text else {}
        if parse_slot(data.get("experiment", "")) is None:
            continue
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
    return Calibration(ratios, host)
