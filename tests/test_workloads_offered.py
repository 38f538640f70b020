"""What a dataset is offered is what runs on it: ``tickbench workloads --dataset D`` lists the workloads that
can run on D and, apart, each other one with the reason; the run refuses the same ones in the same words."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workloads.datasets import get_dataset
from workloads.datasets.roles import Roles
from workloads.datasets.tick_import import import_source
from workloads.operations import WORKLOADS
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
TICK = ("asof-join", "vwap", "snapshot", "year-high-bid", "rolling-mid")
QUOTES = ("spread-by-minute", "ols-spread", "mapreduce-minute-bars")


@pytest.fixture
def quotes(tmp_path) -> str:
    lines = [f"2025-03-10T09:{30 + i // 60:02d}:{i % 60:02d}-04:00,{('BRK.B', 'BF B', '7203.T')[i % 3]},"
             f"{100 + i % 7}.25,{100 + i % 7}.5,{i % 9 + 1},{i % 5 + 1},N" for i in range(600)]
    path = tmp_path / "quotes.csv"
    path.write_text("timestamp,ticker,bid_px,ask_px,bid_sz,ask_sz,exch\n" + "\n".join(lines) + "\n")
    import_source(path, "q", Roles(time="timestamp", key="ticker", price=("bid_px", "ask_px"), size="bid_sz"))
    return "imp_q"


def test_a_quotes_import_is_offered_what_runs_on_it_and_told_why_not_the_rest(quotes, tmp_path):
    env = {"TICKBENCH_HOME": os.environ["TICKBENCH_HOME"], "PATH": "/usr/bin:/bin", "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "app", "workloads", "--dataset", quotes], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    offered, _, refused = done.stdout.partition(f"Not on {quotes}:")
    info = get_dataset(quotes).info
    for name, workload in WORKLOADS.items():
        said = workload.refusal(info)
        assert (f"{name} — " in offered) == (not said), name
        if said:
            assert said in " ".join(refused.split()), name
    assert all(WORKLOADS[name].refusal(info) for name in TICK + QUOTES)
    assert "read-day — " in offered and "minute-bars — " in offered
    assert "bid_pxsiz" not in refused                       # no column name that exists nowhere
    store = ResultsStore(tmp_path / "results")
    try:
        for name in ("vwap", "spread-by-minute"):           # the run refuses in the listing's words
            with pytest.raises(ValueError) as refusal:
                Runner(Scenario(dataset=quotes, target="duckdb", workload=name, users=(1,)), store)
            assert str(refusal.value) == WORKLOADS[name].refusal(info)
    finally:
        store.close()
