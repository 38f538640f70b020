"""A report's reproduction as plain data: its card, the size shown, the published-vs-measured
pairs and the findings (a pack of Tickbench's own: its comparisons between engines), all from the
stored runs. The window's gallery, the HTML/PDF report and
``tickbench reproduce`` show the same object."""
from __future__ import annotations

from dataclasses import dataclass

from workloads.reproduce.catalog import ReportCard, report_card
from workloads.reproduce.comparisons import comparisons
from workloads.reproduce.findings import Finding, findings
from workloads.reproduce.measured import ArmRun, gallery_runs
from workloads.reproduce.published import Pair, pairs


@dataclass(frozen=True)
class Reproduction:
    card: ReportCard
    size: str | None                         # None: no gallery run of this report yet
    pairs: list[Pair]
    findings: list[Finding]
    runs: dict[tuple[str, str], ArmRun]      # (experiment, arm) -> the run behind its figures

    @property
    def run_ids(self) -> list[str]:
        return sorted({arm.run_id for arm in self.runs.values()})


def reproduction(store, report: str, size: str | None = None) -> Reproduction:
    """The report's figures from its newest gallery runs at ``size`` (default: the size run last)."""
    card = report_card(report)
    found = gallery_runs(store, report)
    size = size or found.newest_size()
    runs = found.at(size) if size else {}
    by_nodes = {exp: nodes for (exp, arm), nodes in found.nodes_at(size).items() if arm == "subject"} if size else {}
    found = findings(report, runs, store, by_nodes) + comparisons(report, runs, store)
    return Reproduction(card, size, pairs(card, runs), found, runs)
