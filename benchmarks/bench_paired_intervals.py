"""The paired verdict's interval, simulated: how often Wilcoxon's signed-rank interval (the one
``workloads.results.evidence.paired`` gives) and the sign test's call an A/A comparison changed (a
false alarm) and catch a change of +10 % and +5 %, for pair spreads and pair counts like this
machine's, with 5 % of pairs wild (four times the spread). A verdict is the interval wholly beyond
the 2 % noise floor, as ``verdict_of`` says.

    .venv/bin/python benchmarks/bench_paired_intervals.py [--trials 4000]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from workloads.results.evidence import NOISE_FLOOR, paired


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    floor = math.log1p(NOISE_FLOOR)
    for spread in (0.054, 0.08, 0.16):
        for n in (6, 8, 10, 12, 16):
            said = {"signed-rank": [0, 0, 0], "sign": [0, 0, 0]}
            for _ in range(args.trials):
                noise = rng.normal(0, spread, n)
                wild = rng.random(n) < 0.05
                noise[wild] += rng.normal(0, 4 * spread, wild.sum())
                for k, shift in enumerate((0.0, math.log(1.10), math.log(1.05))):
                    ratios = np.exp(noise + shift)
                    for name, interval in (("signed-rank", _signed_rank), ("sign", sign_test_interval)):
                        low, high = interval(ratios)
                        called = (math.log(low) > floor) if k else (math.log(low) > floor or math.log(high) < -floor)
                        said[name][k] += called
            print(f"pair spread {spread:.1%}, {n:2d} pairs: " + "; ".join(
                f"{name} false alarms {v[0] / args.trials:.1%}, +10 % caught {v[1] / args.trials:.0%}, "
                f"+5 % caught {v[2] / args.trials:.0%}" for name, v in said.items()), flush=True)
    return 0


def sign_test_interval(ratios: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The sign test's interval for the median: order statistics k and n-1-k, k the most that keeps
    the chance of k or fewer of n on one side within (1 - level) / 2 (what ``paired`` used before)."""
    ordered, n = np.sort(ratios), len(ratios)
    k, cumulative = -1, 0.0
    for i in range(n + 1):
        cumulative += math.comb(n, i) / 2 ** n
        if cumulative > (1 - level) / 2:
            break
        k = i
    return float(ordered[max(k, 0)]), float(ordered[n - 1 - max(k, 0)])


def _signed_rank(ratios: np.ndarray) -> tuple[float, float]:
    evidence = paired([1.0] * len(ratios), list(ratios))
    return evidence.low, evidence.high


if __name__ == "__main__":
    raise SystemExit(main())
