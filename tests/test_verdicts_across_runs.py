"""Verdicts between stored runs judged across runs (``workloads.results.evidence``,
``workloads.results.repeat_noise``): a robust spread that one bad run never widens, one rule for the
verdict column and the gate, and a gate that a NaN, an unknown run or a bad baseline never passes."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.results.compare import CANNOT_TELL, SAME, SLOWER, FigureChange, compare_runs
from workloads.results.evidence import (FASTER, MIN_PAIRS, Evidence, one_run_each, paired, signed_rank_cut,
                                        sides, too_few_operations, verdict_of)
from workloads.results.gate import BROKEN, CANNOT, PASSED, Rule, check
from workloads.results.repeat_noise import CrossRun
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
KEY = ((2, None), "p50")


def _group(values: dict[str, float]) -> dict[str, dict]:
    """Runs whose median time is ``value``, their throughput its inverse."""
    return {run: {KEY: value, ((2, None), "ops/s"): 1 / value} for run, value in values.items()}


def test_an_outlying_repeat_never_widens_the_spread_the_others_are_judged_by():
    quiet = {f"r{i}": v for i, v in enumerate((1.00, 1.03, 0.98, 1.01, 0.99))}
    calm = CrossRun(base={}, new={}, groups=[_group(quiet)])
    stormy = CrossRun(base={}, new={}, groups=[_group({**quiet, "starved": 4.5})])
    assert stormy.spread(KEY) == pytest.approx(calm.spread(KEY))
    assert stormy.left_out == {"starved": {"p50"}}
    assert math.expm1(calm.spread(KEY)[0]) < 0.03


def test_a_tail_figures_own_scatter_stays_in_the_spread_of_runs_that_are_whole():
    p95 = ((2, None), "p95")
    group = _group({f"r{i}": 1.0 for i in range(5)})
    for run, value in zip(group, (1.0, 1.01, 0.99, 1.25, 1.0)):
        group[run][p95] = value
    found = CrossRun(base={}, new={}, groups=[group])
    assert math.expm1(found.spread(p95)[0]) > 0.08 and not found.left_out


def test_a_busy_repeat_is_left_out_of_the_spread_while_two_quiet_ones_remain():
    values = {"a": 1.0, "b": 1.02, "busy": 1.09}
    found = CrossRun(base={}, new={}, groups=[_group(values)], busy={"busy"})
    assert found.spread(KEY) == pytest.approx(CrossRun(base={}, new={}, groups=[_group({"a": 1.0, "b": 1.02})]).spread(KEY))
    assert "busy" in found.left_out
    only_busy = CrossRun(base={}, new={}, groups=[_group({"a": 1.0, "busy": 1.09})], busy={"busy"})
    assert only_busy.spread(KEY)[1] == 1               # too few quiet ones: kept, not a spread of nothing


def test_one_run_each_with_no_spread_measured_gives_no_verdict_within_the_wide_band():
    found = CrossRun(base=_group({"a": 1.0}), new=_group({"b": 1.45}), groups=[_group({"a": 1.0}), _group({"b": 1.45})])
    evidence = found.evidence(KEY)
    assert evidence.basis.startswith("one run each: no verdict within ±50%")
    assert verdict_of(evidence, higher_is_better=False) == SAME
    far = CrossRun(base=_group({"a": 1.0}), new=_group({"b": 4.2}), groups=[_group({"a": 1.0}), _group({"b": 4.2})])
    assert verdict_of(far.evidence(KEY), higher_is_better=False) == SLOWER


@pytest.mark.parametrize("bad", [math.nan, math.inf, -0.017, 0.0])
def test_a_figure_that_is_nan_infinite_negative_or_zero_gives_no_evidence(bad):
    assert one_run_each(1.0, bad, 0.5) is None and one_run_each(bad, 1.0, 0.5) is None
    assert sides([1.0, 1.1], [bad], 0.05, 3, "") is None
    assert paired([1.0] * 8, [1.0] * 7 + [bad]) is None or paired([1.0] * 8, [1.0] * 7 + [bad]).basis.startswith("7 ")
    assert verdict_of(None, higher_is_better=False) == CANNOT_TELL


def test_a_tail_figure_is_judged_at_99_5_percent_and_the_rest_at_95():
    usual, tail = sides([1.0, 1.02, 0.98], [1.1], 0.03, 2, ""), sides([1.0, 1.02, 0.98], [1.1], 0.03, 2, "", tail=True)
    assert math.log(tail.high / tail.low) > 3 * math.log(usual.high / usual.low)     # t 14.09 against 4.30 at 2 df


def _signed_rank_tail(n: int, largest: int) -> float:
    """P(W <= largest) for Wilcoxon's signed-rank W of n pairs, by listing every sign pattern."""
    patterns = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1        # row: which ranks are positive
    sums = patterns @ np.arange(1, n + 1)
    return float(np.mean(sums <= largest))


def test_the_signed_rank_interval_covers_the_pairs_centre_at_95_percent_with_the_cut_no_larger_than_that():
    for n in range(MIN_PAIRS, 17):
        cut = signed_rank_cut(n)
        # [w_(cut), w_(M - cut + 1)] misses the centre when W <= cut - 1 or, mirrored, W >= M - cut + 1
        assert 2 * _signed_rank_tail(n, cut - 1) <= 0.05 < 2 * _signed_rank_tail(n, cut), n
    assert signed_rank_cut(MIN_PAIRS - 1) is None


def test_the_paired_interval_holds_at_95_percent_on_heavy_tailed_symmetric_pairs():
    rng = np.random.default_rng(52)
    misses = 0
    for _ in range(1500):                    # Cauchy log-ratios: no variance, a t interval means nothing
        logs = rng.standard_cauchy(10) * 0.05
        evidence = paired([1.0] * 10, list(np.exp(logs)))
        misses += not evidence.low <= 1.0 <= evidence.high
    assert misses / 1500 <= 0.065             # 1 - 0.951 exactly, plus sampling error


def test_paired_repetitions_take_the_pairs_centre_and_one_wild_pair_barely_moves_it():
    a = [10.0, 20.0, 5.0, 8.0, 12.0, 9.0, 11.0, 7.0, 6.0, 15.0, 13.0, 4.0]      # 12 pairs: 78 means, 14 cut each end
    b = [x * 1.10 for x in a]
    assert paired(a, b).ratio == pytest.approx(1.10) and paired(a, b).low == pytest.approx(1.10)
    wild = b[:-1] + [a[-1] * 40]
    assert paired(a, wild).high < 1.2 and verdict_of(paired(a, wild), higher_is_better=False) == SLOWER
    assert paired(a[:5], b[:5]) is None                     # too few pairs for a 95 % interval


@settings(max_examples=300, deadline=None)
@given(ratio=st.floats(0.2, 5), width=st.floats(1.0, 2.0), threshold=st.floats(0.5, 2.0),
       above=st.booleans(), higher=st.booleans())
def test_the_gate_breaks_a_rule_only_where_the_verdict_says_the_figure_moved_that_way(ratio, width, threshold,
                                                                                        above, higher):
    evidence = Evidence(ratio, ratio / width, ratio * width, "")
    said = verdict_of(evidence, higher)
    change = FigureChange("1 user", "rows/s" if higher else "p99", 1.0, ratio, ratio, evidence.low, evidence.high,
                          higher, said, "")
    rule = Rule(change.figure, above, threshold, "rule")
    if rule.broken_by(change):
        moved_up = said == (FASTER if higher else SLOWER)
        assert said != SAME and moved_up == above


# ---- the command, end to end ------------------------------------------------------------------------
def _held(**params) -> Scenario:
    return Scenario(name="held", workload="noop", users=(2,), operations=0, duration_s=0.6, probe_ops=0,
                    params={"hold_s": 0.005, "rows": 100, **params})


def _tickbench(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TICKBENCH_HOME": str(folder), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", "--results", str(folder / "results"), "compare", *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def _make_p99_infinite(folder: Path, run_id: str) -> None:
    path = folder / "results" / "runs" / run_id / "ops.parquet"
    table = pq.read_table(path)
    seconds = table.column("total_s").to_numpy(zero_copy_only=False).copy()
    kinds = table.column("kind").to_pylist()
    measured = [i for i, k in enumerate(kinds) if k == "measured"]
    seconds[measured[-len(measured) // 20:]] = np.inf        # the slowest 5 %: p95 and p99 infinite
    pq.write_table(table.set_column(table.schema.get_field_index("total_s"), "total_s", [seconds]), path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("across")
    store = ResultsStore(folder / "results")
    ids = [Runner(_held(), store).run().run_id for _ in range(4)]
    store.close()
    _make_p99_infinite(folder, ids[-1])
    return folder, ids


def test_an_infinite_p99_makes_the_rule_cannot_check_and_json_stays_strict(runs):
    folder, ids = runs
    gate = _tickbench(folder, ids[0], ids[-1], "--fail-if", "p99 > 1.10x")
    assert gate.returncode == CANNOT, gate.stdout + gate.stderr
    assert "cannot check 'p99 > 1.10x': p99 at 2 users: not a finite figure above 0" in gate.stdout
    as_json = _tickbench(folder, ids[0], ids[-1], "--fail-if", "p99 > 1.10x", "--json")
    found = json.loads(as_json.stdout, parse_constant=lambda word: pytest.fail(f"not JSON: {word}"))
    assert found[-1] == {"exit": CANNOT} and as_json.returncode == CANNOT
    p99 = next(f for f in found[0]["figures"] if f["figure"] == "p99")
    assert p99["verdict"] == CANNOT_TELL and p99["new"] is None


def test_a_run_with_an_infinite_figure_in_the_catalog_leaves_other_comparisons_whole(runs):
    folder, ids = runs
    found = _tickbench(folder, ids[0], ids[1], "--fail-if", "p50 > 1.50x", "--fail-if", "rows/s < 0.5x")
    assert found.returncode == PASSED, found.stdout + found.stderr
    assert "Traceback" not in found.stderr and "math domain error" not in found.stdout + found.stderr


def test_a_broken_rule_exits_1_with_the_same_verdict_in_its_table(runs):
    folder, ids = runs
    store = ResultsStore(folder / "results")
    try:
        slow = Runner(_held(hold_s=0.0075), store).run().run_id
    finally:
        store.close()
    gate = _tickbench(folder, ",".join(ids[:3]), slow, "--fail-if", "p50 > 1.10x", "--json")
    found = json.loads(gate.stdout)
    p50 = next(f for f in found[0]["figures"] if f["figure"] == "p50")
    assert gate.returncode == BROKEN and p50["verdict"] == SLOWER, gate.stdout
    assert found[0]["base_runs"] == ids[:3]


@pytest.mark.parametrize("args, said", [
    (["20990101-000000-dead", "20990101-000000-beef"], "cannot compare"),
    (["--baseline", "NOT_A_BUNDLE", "20990101-000000-beef"], "cannot compare"),
    (["--noise", "nan", "a", "b"], "finite percentage above 0"),
    (["--noise", "0", "a", "b"], "finite percentage above 0"),
    (["--noise", "inf", "a", "b"], "finite percentage above 0"),
])
def test_bad_input_exits_2_in_one_line_without_a_traceback(runs, tmp_path, args, said):
    folder, _ids = runs
    found = _tickbench(folder, *args)
    assert found.returncode == CANNOT and said in found.stderr and "Traceback" not in found.stderr, found.stderr
    assert found.stdout == ""


def test_a_baseline_file_that_is_not_a_bundle_exits_2(runs, tmp_path):
    folder, ids = runs
    junk = tmp_path / "base.tbrun"
    junk.write_bytes(b"not a zip at all")
    found = _tickbench(folder, "--baseline", str(junk), ids[0], "--fail-if", "p99 > 1.10x")
    assert found.returncode == CANNOT and "not a run bundle" in found.stderr and "Traceback" not in found.stderr


def test_check_says_cannot_when_every_step_of_a_rules_figure_is_untold():
    untold = FigureChange("2 users", "p99", 1.0, math.inf, math.inf, None, None, False, CANNOT_TELL, "")
    comparison = type("C", (), {"changes": [untold], "comparable": True})()
    code, results = check(comparison, [Rule.parse("p99 > 1.10x")])
    assert code == CANNOT and not results[0].holds


def test_the_comparison_reads_whole_in_a_terminal_of_80_columns(runs, monkeypatch):
    from rich.console import Console

    import app.cli.compare as cli_compare
    folder, ids = runs
    narrow = Console(width=80, record=True, force_terminal=False)
    monkeypatch.setattr(cli_compare, "console", narrow)
    store = ResultsStore(folder / "results")
    try:
        comparison = compare_runs(store, ids[0], ids[1])
    finally:
        store.close()
    cli_compare._print(comparison, [])
    text = narrow.export_text()
    p50 = next(c for c in comparison.changes if c.figure == "p50")
    assert all(len(line) <= 80 for line in text.splitlines())
    assert p50.interval in text and "same: no difference this machine can see" in " ".join(text.split())


def test_a_percentile_needs_an_operation_beyond_it_in_every_run_of_both_sides():
    assert too_few_operations("p99", [100, 250]) == "" and too_few_operations("p95", [20]) == ""
    assert too_few_operations("p50", [3, 3]) == ""          # a median of three is still a median
    said = too_few_operations("p99", [400, 99, 180])
    assert said.startswith("a run of 99 operations has no p99 of its own (it takes 100")
    assert too_few_operations("p95", [19]) and not too_few_operations("p95", [math.nan, 40])
    p99 = ((2, None), "p99")
    runs = {f"r{i}": {p99: 1.0 + i / 100, ((2, None), "operations"): ops} for i, ops in enumerate((300, 25, 300, 300))}
    short = CrossRun(base={"r0": runs["r0"], "r1": runs["r1"]}, new={"r2": runs["r2"], "r3": runs["r3"]},
                     groups=[{"r0": runs["r0"], "r1": runs["r1"]}, {"r2": runs["r2"], "r3": runs["r3"]}])
    assert short.evidence(p99) is None and "run of 25 operations" in short.too_few(p99)
    runs["r1"][((2, None), "operations")] = 300
    assert short.evidence(p99) is not None and short.too_few(p99) == ""


def test_a_gate_on_the_p99_of_runs_too_short_to_have_one_cannot_check_and_says_why(tmp_path):
    store = ResultsStore(tmp_path / "results")
    try:
        short = Scenario(name="short", workload="noop", users=(1,), operations=30, probe_ops=0,
                         params={"hold_s": 0.001, "rows": 100})
        ids = [Runner(short, store).run().run_id for _ in range(2)]
    finally:
        store.close()
    gate = _tickbench(tmp_path, ids[0], ids[1], "--fail-if", "p99 > 1.10x", "--fail-if", "p50 > 3x")
    assert gate.returncode == CANNOT, gate.stdout + gate.stderr
    assert "cannot check 'p99 > 1.10x': p99 at 1 user: a run of 30 operations has no p99 of its own" in gate.stdout
    assert "holds: p50 > 3x" in gate.stdout               # the median of 30 is judged as before
