"""Each concurrent user of a step draws its own random (day, symbol) slices (issue 52).

A user's random generator (``WorkerContext.rng``) is seeded in its own process from the run's seed,
the step and the user's index (``workloads.run.worker._build_context``). Were the user's index left
out, every user of a step would fetch the same slices in the same order: the step would measure one
user's reads N times over, each slice read while another user has just pulled it into the caches.

Which slice an operation fetched is recorded nowhere, but a slice's row count is known from the
generator: a user's sequence of row counts is the fingerprint of the slices it drew."""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.operations.base import StepPlan
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.run.worker import WorkerSpec, _build_context
from workloads.scenario import Scenario

pytestmark = pytest.mark.timeout(300)

# 6 days x 40 symbols: 240 slices, most of them of a row count no other slice has
SCALE = Scale(days=6, rows_per_day=8_000, symbols=40)
USERS = 3
KIND_ORDER = {"warmup": 0, "measured": 1, "probe": 2}   # the order a user draws its operations in


def _slice_rows(scale: Scale) -> dict[int, list[tuple[int, str]]]:
    """Every (day index, symbol) of the dataset by its row count."""
    dataset = get_dataset("taq")
    key = dataset.info.key_column
    by_rows: dict[int, list[tuple[int, str]]] = {}
    for day in range(scale.days):
        counts = dataset.day_frame(day, scale, StringMode.OBJECT)[key].astype(str).value_counts()
        for symbol, rows in counts.items():
            by_rows.setdefault(int(rows), []).append((day, symbol))
    return by_rows


def test_the_users_of_a_step_fetch_their_own_random_slices(tmp_path):
    store = ResultsStore(tmp_path / "results")
    try:
        scenario = Scenario(dataset="taq", scale=SCALE, target="parquet",
                            target_config={"root": str(tmp_path / "files")}, workload="slice-download",
                            params={"rows_per_user": 4_000}, users=(USERS,), probe_ops=0)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id)
    finally:
        store.close()
    assert ops["ok"].all() and set(ops["worker"]) == set(range(USERS))

    # each user's operations in the order it drew their slices: its warm-ups, then its measured ones
    ops = ops.assign(order=ops["kind"].map(KIND_ORDER)).sort_values(["worker", "order", "seq"])
    drawn = {worker: [int(r) for r in group["rows"]] for worker, group in ops.groupby("worker")}
    by_rows = _slice_rows(SCALE)
    for worker, rows in drawn.items():
        assert len(rows) >= 4, f"user {worker} made too few operations to tell its slices: {rows}"
        assert all(r in by_rows for r in rows), f"user {worker} read a row count no slice has: {rows}"
        # for good measure: a user's own draws are not one slice over and over
        assert len(set(rows)) > 1, f"user {worker} fetched one slice every time: {by_rows[rows[0]]}"

    def named(rows: list[int]) -> list[str]:
        return [" or ".join(f"day {d} {s}" for d, s in by_rows[r]) for r in rows]

    for a in range(USERS):
        for b in range(a + 1, USERS):
            n = min(len(drawn[a]), len(drawn[b]))
            assert drawn[a][:n] != drawn[b][:n], (
                f"users {a} and {b} fetched the same slices in the same order: {named(drawn[a][:n])}")


def _context(worker: int, seed: int = 7, step: int = 0):
    scenario = Scenario(dataset="taq", scale=Scale(days=1, rows_per_day=1_000, symbols=4, seed=seed),
                        workload="noop", users=(3,))
    plan = StepPlan(index=step, users=3, label="3 users")
    spec = WorkerSpec(scenario=scenario.to_dict(), step=asdict(plan), worker=worker, layout=None,
                      target_kind="duckdb", target_config={"path": "unused.duckdb"})
    ctx, _ = _build_context(spec)
    return ctx


def test_a_users_generator_is_seeded_by_the_run_the_step_and_the_user():
    def draws(**where) -> list[int]:
        return [int(v) for v in _context(**where).rng.integers(1 << 30, size=8)]

    assert draws(worker=0) == draws(worker=0)                       # a run can be repeated
    assert len({tuple(draws(worker=w)) for w in range(3)}) == 3     # each user its own
    assert draws(worker=1) != draws(worker=1, step=1)               # each step afresh
    assert draws(worker=1) != draws(worker=1, seed=8)               # another seed, other draws
    assert isinstance(_context(0).rng, np.random.Generator)
