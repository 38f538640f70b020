"""Reports 001 and 004's analytic query suites as a workload: every query of a suite, each run
``repetitions`` times in a row (report 001: 10 times, mean), one record per execution under the
query's id. A query the target cannot express is recorded once as "not supported". The first
execution of each query also records its answer's fingerprint (worked out after the timed span).
Given a duration, a worker runs the whole suite at least once, then again from its first query
until the seconds are up (the narrated demo's suites, whose latency lines must move).
"""
from __future__ import annotations

from pathlib import Path

from workloads.operations.base import Operation, StepPlan, WorkerContext, Workload, checked, named
from workloads.operations.params import Param
from workloads.queries import load_suite, suite_names
from workloads.queries.user_suites import bind, is_suite_file, runs_on
from workloads.queries.answers import fingerprint, normalise, preview
from workloads.scenario import Scenario


def answer_facts(query):
    def facts(result) -> dict:
        answer = normalise(result.frame, query.columns)
        return {"fingerprint": fingerprint(answer), "answer": preview(answer)}
    return facts


class QuerySuite(Workload):
    name = "query-suite"
    title = "Analytic query suite"
    description = ("The reports' analytic queries (001: seven TAQ queries; 004: devices and TAQ "
                   "categories, with interpolation), each run several times in a row; per-query "
                   "times and a geometric mean over the suite; every answer fingerprinted.")
    reference = "report 001 §5.1, report 004 §5"
    op_name = "query"
    roles = frozenset({"time"})
    bounded_by_operations = False
    ends_when = "every query has run its repetitions"
    @property
    def params(self) -> tuple[Param, ...]:     # the suites on disk now, the user's own included
        return (
            Param("suite", "Suite", "choice", "taq001", choices=tuple(suite_names()),
                  help="taq001: report 001's seven; taq004 and devices004: report 004's categories; "
                       "your own from the queries folder of Tickbench's data folder, or a suite file's path "
                       "(FILE.toml: docs/user-suites.md)."),
            Param("repetitions", "Runs per query", "int", 10, 1, 10_000, "runs",
                  help="Report 001 ran each query 10 times and gave the mean."),
        )

    def validate(self, raw: dict) -> dict:
        """A suite by name, or the path of a user's suite file (``suite=FILE.toml``), checked here so a
        malformed file is one line naming it before anything starts."""
        suite = raw.get("suite")
        if not (isinstance(suite, str) and is_suite_file(suite)):
            return super().validate(raw)
        path = str(Path(suite).expanduser().resolve())    # the workers may start elsewhere
        load_suite(path)
        return {**super().validate({k: v for k, v in raw.items() if k != "suite"}), "suite": path}

    def check(self, scenario: Scenario) -> None:
        suite = load_suite(self.validate(scenario.params)["suite"])
        if not runs_on(suite, scenario.dataset):
            from workloads.queries.suites import suite_names
            fit = [name for name in suite_names() if name != suite.name and runs_on(load_suite(name), scenario.dataset)]
            raise ValueError(f"query suite {suite.name} runs on the {suite.dataset} dataset, not {scenario.dataset}: "
                             + (f"choose {' or '.join(f'--param suite={n}' for n in fit)}, or " if fit else "give ")
                             + "a suite of your own (--param suite=FILE.toml, docs/user-suites.md)")

    def steps(self, scenario: Scenario) -> list[StepPlan]:
        self.check(scenario)        # the runner asks for the steps before preparing anything
        return super().steps(scenario)

    def operations_per_step(self, scenario, step, params) -> int:
        return len(load_suite(params["suite"]).queries) * params["repetitions"] * step.users

    def planned_ops(self, params) -> list[tuple[str, str, str]]:
        return [(q.id, q.category, q.description) for q in load_suite(params["suite"]).queries]

    def setup(self, ctx: WorkerContext) -> None:
        suite = load_suite(ctx.params["suite"])
        reps = ctx.params["repetitions"]
        ctx.state["plan"] = [(q, rep) for q in suite.queries
                             for rep in range(reps if ctx.target.supports(q) else 1)]

    def timed_floor(self, ctx: WorkerContext) -> int:
        return len(ctx.state["plan"])

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        plan = ctx.state["plan"]
        if seq < len(plan):
            query, rep = plan[seq]
        else:                                    # a timed suite, again: what the target can answer
            again = ctx.state.get("again")
            if again is None:
                again = ctx.state["again"] = [(q, r) for q, r in plan if ctx.target.supports(q)]
            if not ctx.scenario.duration_s or not again:
                return None
            query, rep = again[(seq - len(plan)) % len(again)]
        query, values = bind(query, ctx.target, ctx.layout)
        op = named(query.id, lambda: ctx.target.run_query(ctx.layout, query, values))
        return checked(answer_facts(query), op) if rep == 0 and seq < len(plan) else op
