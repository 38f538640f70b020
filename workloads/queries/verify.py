"""Every engine gives the same answer: run each suite query once on each target over the same
generated data and compare the answers' fingerprints (``workloads.queries.answers``).

The first target that answers a query is the reference for it; every other target's answer is
"same" or "differs" (a bug in a query text, a dialect's semantics or a target), or "not
supported" (no text in its dialect, a state of its own) or "error" (it failed to run).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workloads.datasets.schema import Scale, StringMode
from workloads.queries import Suite, load_suite, suite_names
from workloads.queries.user_suites import bind
from workloads.queries.answers import fingerprint, normalise, preview
from workloads.scenario import has_own_size, own_scale
from workloads.targets import make_target
from workloads.targets.base import NotSupported
from workloads.run.worker import describe_error

SAME, DIFFERS, NOT_SUPPORTED, ERROR = "same", "differs", "not supported", "error"


@dataclass
class Answer:
    status: str                 # answered | not supported | error
    fingerprint: str = ""
    rows: int = 0
    preview: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    note: str = ""              # how an engine without SQL of its own answered a user's query


@dataclass
class Verdicts:
    targets: list[str]
    queries: list[tuple[str, str]]                    # (suite, query id)
    answers: dict[tuple[str, str], dict[str, Answer]]
    verdicts: dict[tuple[str, str], dict[str, str]]   # same / differs / not supported / error

    @property
    def agree(self) -> bool:
        return not any(v in (DIFFERS, ERROR) for row in self.verdicts.values() for v in row.values())


def suites_of(dataset: str) -> list[Suite]:
    return [s for s in (load_suite(n) for n in suite_names()) if s.dataset == dataset]


def verify(dataset: str, scale: Scale, targets: list[tuple[str, str, dict[str, Any]]],
           suites: list[Suite] | None = None, progress=None) -> Verdicts:
    """``targets``: (label, kind, config) each; answers of every query of ``suites``."""
    suites = suites or suites_of(dataset)
    if has_own_size(dataset):          # an import's or a table's layout, as its runs lay it out
        scale = own_scale(scale)
    queries = [(s.name, q.id) for s in suites for q in s.queries]
    answers: dict[tuple[str, str], dict[str, Answer]] = {key: {} for key in queries}
    for label, kind, config in targets:
        if progress:
            progress(f"preparing {label}")
        target = make_target(kind, config)
        try:
            layout = target.prepare(dataset, scale, StringMode.ARROW)
            target.open(layout)
        except Exception as exc:  # an unreachable target: every answer is its error
            for key in queries:
                answers[key][label] = Answer("error", error=describe_error(exc))
            continue
        try:
            for suite in suites:
                for query in suite.queries:
                    if progress:
                        progress(f"{label}: {suite.name} {query.id}")
                    answers[(suite.name, query.id)][label] = _answer(target, layout, query)
        finally:
            target.close()
    labels = [label for label, _, _ in targets]
    verdicts = {key: _verdicts(answers[key], labels) for key in queries}
    return Verdicts(labels, queries, answers, verdicts)


def _answer(target, layout, query) -> Answer:
    try:
        query, values = bind(query, target, layout)
        result = target.run_query(layout, query, values)
        answer = normalise(result.frame, query.columns)
    except NotSupported as exc:      # whose limit it is, in the target's words ("this server does not support $X")
        return Answer(NOT_SUPPORTED, error=str(exc))
    except Exception as exc:  # a failing query is a verdict of its own, not the end of the check
        return Answer(ERROR, error=describe_error(exc))
    return Answer("answered", fingerprint(answer), len(answer), preview(answer), note=result.extra.get("answered", ""))


def _verdicts(answers: dict[str, Answer], labels: list[str]) -> dict[str, str]:
    reference = next((answers[l].fingerprint for l in labels if answers[l].status == "answered"), None)
    out = {}
    for label in labels:
        answer = answers[label]
        if answer.status == "answered":
            out[label] = SAME if answer.fingerprint == reference else DIFFERS
        else:
            out[label] = answer.status
    return out
