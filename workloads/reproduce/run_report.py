"""Run a report's experiments one after another, headless (``tickbench reproduce``, tests).

The same Runner as every other run: each arm is an ordinary stored run, tagged with its gallery
slot, so the window's history, compare and report show it like any other.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workloads.reproduce.catalog import Arm, Experiment, report_card
from workloads.run.runner import RunResult, Runner

REFUSED = "not run"      # a result's status when the run was refused before it started
from workloads.scenario import Scenario


def planned_runs(report: str, size: str, subject: str, subject_config: dict | None, data_dir: Path,
                 comparator: str | None = None, comparator_config: dict | None = None,
                 experiments: list[str] | None = None) -> list[tuple[Experiment, Arm, Scenario]]:
    """Every run the report's experiments need at ``size`` (comparator arms only with a comparator)."""
    card = report_card(report)
    chosen = [card.experiment(key) for key in experiments] if experiments else list(card.experiments)
    return [(exp, arm, scenario) for exp in chosen
            for arm, scenario in exp.scenarios(size, subject, subject_config, comparator, comparator_config,
                                               data_dir=data_dir)]


def run_planned(store, planned: list[tuple[Experiment, Arm, Scenario]],
                on_start: Callable[[int, int, Experiment, Arm, Runner], None] | None = None,
                on_end: Callable[[RunResult], None] | None = None) -> list[RunResult]:
    """Run them in order; a failed run is kept and the next one starts, and a run refused before it
    starts (an engine that cannot ask the question) is one result saying why, stored nowhere."""
    results = []
    for index, (exp, arm, scenario) in enumerate(planned):
        try:
            runner = Runner(scenario, store)
        except (ValueError, KeyError) as exc:
            reason = str(exc).strip("'\"")       # a KeyError's text comes quoted
            refused = RunResult("", REFUSED, f"{exp.key} · {arm.label}: {reason}")
            results.append(refused)
            if on_end:
                on_end(refused)
            continue
        if on_start:
            on_start(index, len(planned), exp, arm, runner)
        result = runner.run()
        results.append(result)
        if on_end:
            on_end(result)
    return results
