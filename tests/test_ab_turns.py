"""``tickbench ab`` taking turns: a pair's two runs side by side, their users making one operation
each in turn (``workloads.run.turns``), on real runs of the no-op; the waits for a turn in no figure;
the record naming the partner; a side that cannot start never keeping the other waiting; and the
stored-runs compare judging such runs as the pairs they are."""
from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from workloads.results.compare import compare_runs
from workloads.results.store import ResultsStore
from workloads.run import ab
from workloads.run.ab import Pair, run_ab, run_pair
from workloads.run.runner import Runner
from workloads.run.turns import together_refusal
from workloads.scenario import Scenario


def held(hold_s: float = 0.020, duration_s: float = 0.4, **changes) -> Scenario:
    return Scenario(name="held", workload="noop", users=(1,), operations=0, duration_s=duration_s, probe_ops=0,
                    params={"hold_s": hold_s}, **changes)


@pytest.fixture
def store(tmp_path):
    store = ResultsStore(tmp_path / "results")
    yield store
    store.close()


def _timeline(store, run_ids: dict[str, str]) -> pd.DataFrame:
    """Every measured operation of the runs on one clock: (side, start, end), in time order."""
    parts = []
    for side, run_id in run_ids.items():
        released = pd.Timestamp(store.frame("SELECT released_at FROM steps WHERE run_id = ?", [run_id]).iloc[0, 0])
        ops = store.ops(run_id, kinds=("measured",))
        start = released + pd.to_timedelta(ops["t_start"], unit="s")
        parts.append(pd.DataFrame({"side": side, "start": start,
                                   "end": start + pd.to_timedelta(ops["total_s"], unit="s")}))
    return pd.concat(parts).sort_values("start", ignore_index=True)


def test_a_pairs_users_take_turns_one_operation_each_the_first_side_first(store):
    for order in ("AB", "BA"):
        # a second each (~25 turns a side): 16 operations even where a noisy host loses half of it
        pair = run_pair({"A": held(duration_s=1.0), "B": held(duration_s=1.0)}, store, Pair(0, order))
        assert pair.kept, (pair.a.message, pair.b.message)
        line = _timeline(store, {"A": pair.a.run_id, "B": pair.b.run_id})
        assert len(line) >= 16
        assert line["side"].iloc[0] == order[0]
        # one operation each in turn: no side makes two in a row, and none starts before the other's ended
        assert (line["side"] != line["side"].shift()).iloc[1:].all(), list(line["side"])
        overlap = (line["start"].iloc[1:].to_numpy() - line["end"].iloc[:-1].to_numpy()) / pd.Timedelta("1ms")
        assert overlap.min() > -3, overlap.min()        # the clocks of the two records agree within ~1 ms
        # both measured the same stretch: when one side was done the other stopped at its next turn
        counts = line["side"].value_counts()
        assert abs(counts["A"] - counts["B"]) <= 1


def test_the_waits_for_a_turn_are_in_no_figure_and_the_record_names_the_partner(store):
    pair = run_pair({"A": held(0.020), "B": held(0.020)}, store, Pair(0, "AB"))
    for rep, other in ((pair.a, pair.b), (pair.b, pair.a)):
        figures = rep.figures[(1, None)]
        # 20 ms operations: 50 a second of its own time, not the ~25 a wall-clock window gives
        assert 40 < figures["ops/s"] < 52, figures
        assert 0.019 < figures["p50"] < 0.025
        interleaved = store.run(rep.run_id)["environment"]["interleaved"]
        assert interleaved["with_run"] == other.run_id and interleaved["side"] == rep.side


def test_a_slower_b_taking_turns_is_slower_by_what_it_adds(store):
    result = run_ab(held(0.010), held(0.011), store, max_pairs=10, seed=5)
    assert result.interleave == "operations" and result.interleave_why == ""
    assert result.outcome == "clear", result.stop
    (p50,) = [v for v in result.verdicts if v.figure == "p50"]
    assert p50.verdict == "slower" and 1.07 < p50.evidence.low <= p50.evidence.high < 1.13
    (ops,) = [v for v in result.verdicts if v.figure == "ops/s"]
    assert ops.verdict == "slower" and ops.evidence.ratio < 0.95     # its own time: not locked to A's pace (1.0 if it were)


def test_stored_runs_that_took_turns_are_judged_as_pairs_as_ab_judged_them(store):
    result = run_ab(held(0.010), held(0.011), store, max_pairs=8, seed=5)
    kept = [p for p in result.pairs if p.kept]
    comparison = compare_runs(store, [p.a.run_id for p in kept], [p.b.run_id for p in kept])
    assert "took turns" in comparison.noise
    stored = next(c for c in comparison.changes if c.figure == "p50")
    (session,) = [v for v in result.verdicts if v.figure == "p50"]
    assert stored.verdict == session.verdict == "slower"
    assert stored.low == pytest.approx(session.evidence.low) and stored.high == pytest.approx(session.evidence.high)
    # one pair's partner left out: no longer pairs, judged as runs a side
    partial = compare_runs(store, [p.a.run_id for p in kept], [p.b.run_id for p in kept[:-1]])
    assert "took turns" not in partial.noise


def test_a_side_that_cannot_start_never_keeps_the_other_waiting(store, monkeypatch):
    class BrokenB(Runner):
        def run(self):
            if self.scenario.name.endswith("B"):
                raise RuntimeError("the server went away")
            return super().run()
    monkeypatch.setattr(ab, "Runner", BrokenB)
    started = time.monotonic()
    result = run_ab(held(duration_s=2.0), held(duration_s=2.0), store, max_pairs=2, seed=1)
    assert time.monotonic() - started < 60             # not the meeting's 10-minute wait
    assert result.kept == 0 and result.outcome == "too few"
    reasons = {d["side"]: d["reason"] for d in result.dropped()}
    assert reasons["B"] == "failed: RuntimeError: the server went away"


def test_ctrl_c_while_taking_turns_cancels_both_runs_and_keeps_them(store):
    stop = threading.Event()

    def progress(event):
        if event.pair == 2 and event.runner is not None and not stop.is_set():   # mid-way through the second pair
            threading.Timer(1.0, stop.set).start()
    result = run_ab(held(duration_s=3.0), held(duration_s=3.0), store, max_pairs=4, seed=1,
                    on_progress=progress, should_stop=stop.is_set)
    assert result.status == "cancelled" and len(result.pairs) == 2
    statuses = {r["run_id"]: r["status"] for r in store.runs().to_dict("records")}
    first, last = result.pairs
    assert statuses[first.a.run_id] == statuses[first.b.run_id] == "completed"
    assert statuses[last.a.run_id] == statuses[last.b.run_id] == "cancelled"


def test_what_cannot_take_turns_runs_run_by_run_and_says_why():
    assert together_refusal(held(), held()) == ""
    assert together_refusal(held(), held(cache="cold")) == "B: a cold step clears caches between operations"
    assert together_refusal(Scenario(workload="upload-sweep"), held()).startswith("A: upload-sweep writes")
    assert together_refusal(held(), held(start="spawn")) == "A's users start by forkserver, B's by spawn"
    assert together_refusal(held(rate=(50.0,)), held()) == "A: an open-loop schedule sets when its operations start"
    with pytest.raises(ValueError, match="cannot take turns operation by operation: B: a cold step"):
        run_ab(held(), held(cache="cold"), None, interleave="operations")


def test_compare_names_taking_turns_as_a_condition_that_differs(store):
    pair = run_pair({"A": held(), "B": held()}, store, Pair(0, "AB"))
    alone = Runner(held(), store).run()
    comparison = compare_runs(store, alone.run_id, pair.a.run_id)
    assert ("users' operations", "alone", "taking turns with another run's") in comparison.environment
    both = compare_runs(store, pair.a.run_id, pair.b.run_id)
    assert not [row for row in both.environment if row[0] == "users' operations"]


def test_show_and_the_results_view_say_the_operations_took_turns(store):
    from workloads.results.run_summary import run_answer
    pair = run_pair({"A": held(), "B": held()}, store, Pair(0, "BA"))
    answer = run_answer(store, pair.a.run_id)
    assert f"took turns with one of run {pair.b.run_id}'s" in answer.conditions
    alone = Runner(held(), store).run()
    assert "took turns" not in run_answer(store, alone.run_id).conditions


def test_when_one_side_is_done_the_other_stops_at_its_next_turn(store):
    # B would go on twice as long: taking turns, it stops when A is done, so both measured one stretch
    pair = run_pair({"A": held(duration_s=0.3), "B": held(duration_s=0.6)}, store, Pair(0, "AB"))
    line = _timeline(store, {"A": pair.a.run_id, "B": pair.b.run_id})
    counts = line["side"].value_counts()
    assert abs(counts["A"] - counts["B"]) <= 1, counts.to_dict()
    assert line["side"].iloc[-1] in ("A", "B") and (line["end"].max() - line["start"].min()) < pd.Timedelta("0.5s")


def test_a_user_killed_mid_run_never_keeps_the_other_side_waiting(store):
    import os
    import signal

    import psutil
    done = {}
    worker = threading.Thread(target=lambda: done.update(pair=run_pair({"A": held(duration_s=4.0),
                                                                         "B": held(duration_s=4.0)},
                                                                        store, Pair(0, "AB"))))
    started = time.monotonic()
    worker.start()
    users = []
    while len(users) < 2 and time.monotonic() - started < 30:       # both sides' users, forked by the server
        time.sleep(0.2)
        servers = [p for p in psutil.Process().children() if "forkserver" in " ".join(p.cmdline())]
        users = [u for server in servers for u in server.children()]
    assert len(users) == 2
    time.sleep(1.5)                                                    # mid-run, taking turns
    os.kill(min(u.pid for u in users), signal.SIGKILL)
    killed = time.monotonic()
    worker.join(120)
    assert not worker.is_alive() and time.monotonic() - killed < 15, time.monotonic() - killed   # never 10 minutes
    pair = done["pair"]
    assert {pair.a.status, pair.b.status} != {"completed"} or "killed" in (pair.a.message + pair.b.message)
