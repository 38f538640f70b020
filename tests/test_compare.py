"""``tickbench compare`` and its gate, on a target whose truth is known: the no-op workload whose
every operation takes a set time and returns a set number of rows. Two runs of one scenario must
read "no difference" nearly always; a run whose operations take 20 % longer must read "slower"."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workloads.datasets.schema import Scale
from workloads.results.compare import FASTER, SAME, SLOWER, TOO_FEW, FigureChange, compare_runs
from workloads.results.evidence import Evidence, verdict_of
from workloads.results.gate import BROKEN, CANNOT, PASSED, Rule, check
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
HOLD_S = 0.010


def held(hold_s: float = HOLD_S, name: str = "held", **changes) -> Scenario:
    return Scenario(name=name, workload="noop", users=(2,), operations=0, duration_s=1.0, probe_ops=0,
                    params={"hold_s": hold_s, "rows": 1000}, **changes)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """Eleven runs of one scenario, one whose operations take 20 % longer, one on other data."""
    folder = tmp_path_factory.mktemp("compare")
    store = ResultsStore(folder / "results")
    same = []
    for _ in range(11):
        result = Runner(held(), store).run()
        assert result.status == "completed", result.message
        same.append(result.run_id)
    slower = Runner(held(HOLD_S * 1.2, "slower"), store).run().run_id
    other = Runner(held(dataset="devices", scale=Scale(days=1, rows_per_day=1000)), store).run().run_id
    yield store, folder, same, slower, other
    store.close()


def test_runs_of_one_scenario_read_no_difference_in_at_least_nine_pairs_of_ten(catalog):
    store, _folder, same, _slower, _other = catalog
    quiet, seen = 0, []
    for base, new in zip(same, same[1:]):
        found = compare_runs(store, base, new)
        assert found.comparable and {c.figure for c in found.changes} >= {"rows/s", "ops/s", "p50", "p99", "first op"}
        changed = [(c.figure, round(c.ratio, 3), c.interval) for c in found.changes if c.verdict != SAME]
        seen.append(changed)
        quiet += not changed
    assert quiet >= 9, seen


def test_operations_twenty_percent_longer_read_slower_in_p50_and_rows_per_second(catalog):
    store, _folder, same, slower, _other = catalog
    found = compare_runs(store, same[0], slower)
    by_figure = {c.figure: c for c in found.changes}
    assert by_figure["p50"].verdict == SLOWER and 1.15 < by_figure["p50"].ratio < 1.25
    assert by_figure["rows/s"].verdict == SLOWER and by_figure["rows/s"].high < 1 / 1.02
    # backwards (with a band given: as repeats of one no-op scenario, the 20 % run would widen its own)
    backwards = {c.figure: c.verdict for c in compare_runs(store, slower, same[0], noise=0.05).changes}
    assert backwards["p50"] == FASTER and backwards["rows/s"] == FASTER


def test_runs_that_measure_different_things_are_refused_with_the_reason(catalog):
    store, _folder, same, _slower, other = catalog
    found = compare_runs(store, same[0], other)
    assert not found.comparable
    assert any(r.startswith("another dataset: taq against devices") for r in found.refusals)


def test_a_rule_is_broken_only_when_the_whole_interval_is_past_it():
    assert verdict_of(Evidence(1.10, 1.06, 1.14, ""), higher_is_better=False) == SLOWER
    assert verdict_of(Evidence(1.10, 0.99, 1.16, ""), higher_is_better=False) == SAME    # 1 is inside the interval
    assert verdict_of(Evidence(1.02, 1.015, 1.025, ""), higher_is_better=False) == SAME  # inside the noise floor
    rule = Rule.parse("p99 > 1.10x")
    change = lambda low, high: FigureChange("2 users", "p99", 1.0, 1.2, 1.2, low, high, False, SLOWER, "")  # noqa: E731
    assert rule.broken_by(change(1.11, 1.3)) and not rule.broken_by(change(1.09, 1.3))
    assert Rule.parse("rows/s < 0.95x").broken_by(FigureChange("s", "rows/s", 1, 0.9, 0.9, 0.91, 0.94, True, SLOWER, ""))
    with pytest.raises(ValueError, match="a figure, > or <, and a ratio ending in x"):
        Rule.parse("p99 above 10%")


def _tickbench(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TICKBENCH_HOME": str(folder), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", "--results", str(folder / "results"), "compare", *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_the_gate_exits_0_when_rules_hold_1_when_one_is_broken_and_2_when_it_cannot_compare(catalog):
    store, folder, same, slower, other = catalog
    quiet = next((b, n) for b, n in zip(same, same[1:])
                 if check(compare_runs(store, b, n), [Rule.parse("p50 > 1.10x")])[0] == PASSED)
    held_rules = ["--fail-if", "p50 > 1.10x", "--fail-if", "rows/s < 0.90x"]
    assert _tickbench(folder, *quiet, *held_rules).returncode == PASSED
    broken = _tickbench(folder, same[0], slower, *held_rules)
    assert broken.returncode == BROKEN, broken.stdout + broken.stderr
    assert re.search(r"broken: p50 > 1\.10x — p50 at 2 users: 1\.[12]\d+x \(95 % across runs 1\.\d+-1\.\d+\)",
                     broken.stdout), broken.stdout
    refused = _tickbench(folder, "--baseline", same[0], other, *held_rules)
    assert refused.returncode == CANNOT and "another dataset: taq against devices" in refused.stdout
    unknown = _tickbench(folder, *quiet, "--fail-if", "p42 > 1.1x")
    assert unknown.returncode == CANNOT and "cannot check 'p42 > 1.1x'" in unknown.stdout
    as_json = json.loads(_tickbench(folder, same[0], slower, "--json").stdout)
    figures = {f["figure"]: f for f in as_json[0]["figures"] if f["step"] == "2 users"}
    assert figures["p50"]["verdict"] == SLOWER and as_json[-1] == {"exit": 0}


def test_the_spread_is_measured_from_the_catalogs_repeats_of_the_scenario(catalog, tmp_path):
    store, _folder, same, slower, _other = catalog
    found = compare_runs(store, same[0], slower)
    assert "10 repeats of the base scenario here" in found.noise        # the newest ten, the judged one left out
    from workloads.results.repeat_noise import repeats_of
    assert same[1] not in {r["run_id"] for r in repeats_of(store, store.run(same[0]), leave_out=(same[0], same[1]))}
    # three repeats that agree: 12 % is a change; a band of 15 % as given, or one run each alone, is not sure of it
    noisy = ResultsStore(tmp_path / "noisy")
    try:
        ids = [Runner(held(HOLD_S), noisy).run().run_id for _ in range(3)]
        other = Runner(held(HOLD_S * 1.12, "12 % slower"), noisy).run().run_id
        quiet = {c.figure: c for c in compare_runs(noisy, ids[-1], other).changes}["p50"]
        assert quiet.verdict == SLOWER and "2 df" in quiet.basis, quiet
        assert {c.figure: c.verdict for c in compare_runs(noisy, ids[-1], other, noise=0.15).changes}["p50"] == SAME
        alone = {c.figure: c for c in compare_runs(noisy, ids[-1], other, use_repeats=False).changes}["p50"]
        assert alone.verdict == SAME and alone.basis.startswith("one run each: no verdict within ±50%")
    finally:
        noisy.close()


def test_a_first_operation_of_one_fresh_process_each_is_too_few_to_judge(catalog, tmp_path):
    store = ResultsStore(tmp_path / "one")
    try:
        ids = [Runner(held(hold).with_changes(users=(1,)), store).run().run_id for hold in (HOLD_S, HOLD_S * 3)]
        first = {c.figure: c for c in compare_runs(store, *ids).changes}["first op"]
        assert first.verdict == TOO_FEW and first.low is None
        code, results = check(compare_runs(store, *ids), [Rule.parse("first op > 1.5x")])
        assert code == CANNOT and "one value per run, too few to tell" in results[0].line()
    finally:
        store.close()


def test_runs_whose_users_ran_under_other_process_conditions_say_so(catalog):
    store, _folder, same, _slower, _other = catalog
    plain = Runner(held(process="plain"), store).run()
    assert plain.status == "completed", plain.message
    differences = {what: (b, n) for what, b, n in compare_runs(store, same[0], plain.run_id).environment}
    assert differences["users' process"] == ("forked, settled", "forked, plain")
    assert "users' process" not in {what for what, _, _ in compare_runs(store, same[0], same[1]).environment}
    store.delete_run(plain.run_id)          # the catalog's runs stay as the other tests expect them


def test_runs_carried_in_bundles_compare_to_the_same_figures_and_a_bundle_is_a_baseline(catalog, tmp_path):
    from workloads.results.bundle import write_bundle
    from workloads.results.bundle_open import open_bundle
    store, _folder, same, slower, _other = catalog
    bundles = [write_bundle(store, run, tmp_path / f"{run}.tbrun") for run in (same[0], slower)]
    elsewhere = tmp_path / "elsewhere"
    other = ResultsStore(elsewhere / "results")
    try:
        opened = [open_bundle(other, path).run_id for path in bundles]
        assert opened == [same[0], slower]
        here, there = compare_runs(store, same[0], slower, noise=0.05), compare_runs(other, *opened, noise=0.05)
        figures = lambda c: [(f.step, f.figure, f.base, f.new, f.ratio, f.low, f.high, f.verdict) for f in c.changes]  # noqa: E731
        assert figures(there) == figures(here) and there.comparable
        # marked with the host they came from, in History's names and the comparison's differences
        from workloads.results.history import history_rows
        came = f"(from {store.run(same[0])['environment']['host']})"
        assert all(row["name"].endswith(came) for row in history_rows(other))
        assert ("came from", came.strip("()"), came.strip("()")) in there.environment
    finally:
        other.close()
    alone = _tickbench(elsewhere, "--baseline", str(bundles[0]), slower, "--fail-if", "p50 > 1.10x")
    assert alone.returncode == PASSED and "one run each" in alone.stdout, alone.stdout   # 1.2x is within ±50 %
    more = [write_bundle(store, run, tmp_path / f"{run}.tbrun") for run in same[1:3]]
    gate = _tickbench(elsewhere, *[arg for path in (bundles[0], *more) for arg in ("--baseline", str(path))], slower,
                      "--fail-if", "p50 > 1.10x")
    assert gate.returncode == BROKEN, gate.stdout + gate.stderr


def test_a_quantile_resampled_by_rank_gives_the_interval_resampling_and_sorting_gives():
    import numpy as np
    from workloads.results.compare_stats import quantile_interval
    rng = np.random.default_rng(7)
    base, new = rng.lognormal(0, 0.5, 400), rng.lognormal(0.1, 0.5, 300)
    for q in (0.5, 0.95):
        point = np.quantile(new, q) / np.quantile(base, q)
        low, high = quantile_interval(point, base, new, q)
        draws = [np.quantile(rng.choice(new, new.size), q) / np.quantile(rng.choice(base, base.size), q)
                 for _ in range(2000)]
        brute_low, brute_high = np.quantile(draws, [0.025, 0.975])
        assert low == pytest.approx(brute_low, rel=0.06) and high == pytest.approx(brute_high, rel=0.06), q


def test_a_cold_step_is_resampled_in_whole_rounds(tmp_path):
    import numpy as np
    from workloads.results.compare_stats import Sample, ratio_of_sums_interval
    rng = np.random.default_rng(3)
    rounds = np.repeat(np.arange(12), 4)                       # 12 rounds of 4 users
    shared = np.repeat(rng.lognormal(0, 0.4, 12), 4)          # a round's clear slows all its users alike

    def sample(scale):
        seconds = scale * shared * rng.lognormal(0, 0.05, rounds.size)
        return seconds, np.ones(rounds.size), np.tile(np.arange(4), 12)
    (b_top, b_bot, workers), (n_top, n_bot, _) = sample(1.0), sample(1.0)
    point = n_top.sum() / b_top.sum()
    as_ops = ratio_of_sums_interval(point, Sample(b_top, b_bot, workers), Sample(n_top, n_bot, workers))
    as_rounds = ratio_of_sums_interval(point, Sample(b_top, b_bot, workers, rounds), Sample(n_top, n_bot, workers, rounds))
    assert as_rounds[1] - as_rounds[0] > 1.5 * (as_ops[1] - as_ops[0])     # operations drawn apart: too sure

    store = ResultsStore(tmp_path / "results")
    try:
        cold = Scenario(dataset="taq", scale=Scale(days=4, rows_per_day=20_000, symbols=20), target="pickle",
                        target_config={"root": str(tmp_path / "files")}, workload="read-day", users=(2,),
                        operations=4, cache="cold", probe_ops=0)
        ids = [Runner(cold, store).run().run_id for _ in range(2)]
        found = compare_runs(store, *ids)
        assert found.comparable and {c.basis.split("; ")[-1] for c in found.changes if c.figure == "p50"} == {
            "4 rounds (8 operations) and 4 rounds (8 operations)"}
    finally:
        store.close()
