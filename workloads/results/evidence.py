"""How sure a verdict between runs is, from repetitions: never from one run's operations alone.

A bootstrap over one run's operations says how sure that run's figure is, not how much a second
run of the same scenario will differ: a process's allocator, the files' place on disk and the
neighbours' load move a whole run at once (here, two runs of one warm DuckDB scenario differed by
up to 31 %, their p99 by 64 %). So every verdict between runs comes from one of two kinds of
evidence, both intervals of the ratio new / base:

- **paired repetitions** (``paired``): A and B run interleaved, repetition after repetition, each a
  fresh set of user processes; each pair's ratio B_i / A_i cancels what moves a whole pair (a busy
  minute slows both). The centre is the Hodges-Lehmann estimate of the pairs' log-ratios (the
  median of their pairwise means) and the interval Wilcoxon's signed-rank one (order statistics of
  those means): exact whatever the ratios' spread, as long as it is symmetric, which random order
  makes it under "no change" (which side runs first is a coin toss). It wastes fewer pairs than the
  sign test (about 2/3 of them for the same width on near-normal ratios) and one wild pair moves it
  by a few ranks only. It needs ``MIN_PAIRS`` pairs.
- **runs a side** (``sides``): the stored runs of each side, with the spread two runs of one
  scenario show on this machine (``workloads.results.repeat_noise``): a t interval of the
  difference of the sides' mean log figures. With no spread measured (one run each, no repeats in
  the catalog) the interval is the ratio widened by ``ONE_RUN_BAND``: "one run each: no verdict
  beyond ±Y %".

A verdict ("faster", "slower", ...) needs the whole interval beyond ``NOISE_FLOOR`` either side of
1 (as Criterion.rs's noise threshold: a 1 % change however sure is no change a team acts on); a
gate rule is broken only where the verdict is also the bad one, so the two can never disagree. A
figure that is missing, zero, negative, NaN or infinite gives no evidence: "cannot tell"; so does a
percentile of runs too short to have one (``too_few_operations``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

NOISE_FLOOR = 0.02
MIN_PAIRS = 6                   # the fewest pairs whose 95 % signed-rank interval exists (1 - 2/2^6 = 96.9 %)
LEVEL = 0.95
# The largest change two identical runs showed here (bench_compare_noise, the CI runs):
# rates and medians up to 31 %, tails (p95, p99) and first operations up to 64 %; rounded up.
ONE_RUN_BAND = {"rate": 0.50, "tail": 1.00}
MIN_SPREAD = 0.01               # a measured spread under 1 % (three repeats that agree by chance) is taken as 1 %

# A run's percentile is its own only with an operation beyond it: in a run of fewer operations its
# p95 (p99) is its slowest one, which one 3 ms stall moves by 30 % on a 10 ms answer, and the pairs of
# one comparison, minutes apart, share such stalls: an A/A gate failed on p99s of 25 operations.
PERCENTILE_OPS = {"p95": 20, "p99": 100}
OPERATIONS = "operations"       # a step's count of operations, kept beside its figures for the rule above

SAME = "no difference this machine can see"
CANNOT_TELL = "cannot tell"
FASTER, SLOWER, SMALLER, LARGER = "faster", "slower", "smaller", "larger"

# two-sided 95 % quantiles of Student's t, by degrees of freedom (1-30); beyond, the normal's
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)


# ... and 99.5 % ones, for the tails (p95, p99, a fresh process's first operation), whose scatter
# between runs has heavy tails of its own: a rare run with a slow tail is no change in the code
_T995 = (127.32, 14.089, 7.453, 5.598, 4.773, 4.317, 4.029, 3.833, 3.690, 3.581, 3.497, 3.428, 3.372, 3.326,
         3.286, 3.252, 3.222, 3.197, 3.174, 3.153, 3.135, 3.119, 3.104, 3.091, 3.078, 3.067, 3.057, 3.047,
         3.038, 3.030)


def t95(df: int, tail: bool = False) -> float:
    """Student's t quantile for a two-sided 95 % interval (99.5 % for a tail figure)."""
    if df < 1:
        raise ValueError("a t interval needs one degree of freedom or more")
    table, limit, excess = (_T995, 2.807, 6.0) if tail else (_T95, 1.960, 2.4)
    return table[df - 1] if df <= len(table) else limit + excess / df      # excess/df: the t's excess, to 0.2 %


@dataclass(frozen=True)
class Evidence:
    """The ratio new / base of one figure and its 95 % interval across runs (or repetitions)."""
    ratio: float
    low: float
    high: float
    basis: str                  # "8 paired repetitions", "3 runs against 2", "one run each: ..."

    @property
    def could_see(self) -> float:
        """The smallest change this evidence can tell from none, as a fraction (0.05: ±5 %): half
        its interval's width on a log scale, and never under the noise floor."""
        return max(NOISE_FLOOR, math.expm1((math.log(self.high) - math.log(self.low)) / 2))


def finite_positive(value) -> bool:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(value) and value > 0


def verdict_of(evidence: Evidence | None, higher_is_better: bool, sizes: bool = False) -> str:
    """Better or worse only when the whole interval lies beyond the noise floor either side of 1."""
    if evidence is None:
        return CANNOT_TELL
    up, down = evidence.low > 1 + NOISE_FLOOR, evidence.high < 1 / (1 + NOISE_FLOOR)
    if not (up or down):
        return SAME
    better = up == higher_is_better
    if sizes:
        return SMALLER if better else LARGER
    return FASTER if better else SLOWER


def band_family(figure: str) -> str:
    return "tail" if figure in ("p95", "p99", "first op") else "rate"


def too_few_operations(figure: str, counts: Iterable) -> str:
    """Why runs of ``counts`` operations (one count a run) give no ``figure`` to judge between them:
    a percentile the shortest run is too short to have; "" when they give one."""
    needed = PERCENTILE_OPS.get(figure)
    known = [int(c) for c in counts if c is not None and c == c]
    if needed is None or not known or min(known) >= needed:
        return ""
    return (f"a run of {min(known)} operations has no {figure} of its own (it takes {needed}: "
            "in fewer, the slowest operation stands in for it)")


def one_run_each(base: float, new: float, band: float) -> Evidence | None:
    """One run a side and no spread measured: the ratio widened by ``band`` each way."""
    if not (finite_positive(base) and finite_positive(new)):
        return None
    ratio = new / base
    return Evidence(ratio, ratio / (1 + band), ratio * (1 + band),
                    f"one run each: no verdict within ±{band:.0%}")


def sides(base: Sequence[float], new: Sequence[float], spread: float, df: int, basis: str,
          tail: bool = False) -> Evidence | None:
    """Runs a side, with ``spread`` the standard deviation of a run's log figure across repeats of
    one scenario here (``df`` its degrees of freedom): the t interval of the difference of the
    sides' mean logs (``tail``: at 99.5 %)."""
    if not base or not new or not all(finite_positive(v) for v in (*base, *new)) or df < 1:
        return None
    if not math.isfinite(spread):
        return None
    centre = float(np.mean(np.log(new)) - np.mean(np.log(base)))
    half = t95(df, tail) * max(spread, MIN_SPREAD) * math.sqrt(1 / len(base) + 1 / len(new))
    return Evidence(math.exp(centre), math.exp(centre - half), math.exp(centre + half), basis)


def signed_rank_cut(n: int, level: float = LEVEL) -> int | None:
    """How many of n pairs' n(n+1)/2 pairwise means (Walsh averages) the interval leaves out at each
    end, so that the ones from the cut-th to the cut-th last cover the pairs' centre with at least
    ``level`` confidence: the exact null distribution of Wilcoxon's signed-rank statistic (each pair's
    sign a coin toss). None when n is too few for any interval at ``level``."""
    total = n * (n + 1) // 2
    counts = [1] + [0] * total              # counts[w]: sign patterns whose positive ranks sum to w
    for rank in range(1, n + 1):
        for w in range(total, rank - 1, -1):
            counts[w] += counts[w - rank]
    tail, cumulative, cut = (1 - level) / 2 * 2 ** n, 0, 0
    while cut <= total and cumulative + counts[cut] <= tail:
        cumulative += counts[cut]
        cut += 1
    return cut if cut >= 1 else None


def paired(base: Sequence[float], new: Sequence[float], level: float = LEVEL) -> Evidence | None:
    """Paired repetitions: pair i is (base[i], new[i]), run side by side. The Hodges-Lehmann centre
    of the pairs' log-ratios with Wilcoxon's signed-rank interval; None with fewer than
    ``MIN_PAIRS`` usable pairs."""
    logs = [math.log(n / b) for b, n in zip(base, new) if finite_positive(b) and finite_positive(n)]
    centre = hodges_lehmann(logs, level)
    if centre is None:
        return None
    return Evidence(*(math.exp(v) for v in centre), f"{len(logs)} paired repetitions")


def hodges_lehmann(logs: Sequence[float], level: float = LEVEL) -> tuple[float, float, float] | None:
    """The centre of ``logs`` (the median of their pairwise means) and Wilcoxon's signed-rank
    interval around it, in logs; None with fewer than ``MIN_PAIRS`` values."""
    logs = np.asarray(logs, dtype=float)
    cut = signed_rank_cut(len(logs), level)
    if cut is None or len(logs) < MIN_PAIRS:
        return None
    upper = np.triu_indices(len(logs))
    walsh = np.sort((logs[:, None] + logs[None, :])[upper] / 2)
    return float(np.median(walsh)), float(walsh[cut - 1]), float(walsh[len(walsh) - cut])


def pairs_to_settle(evidence: Evidence, pairs: int, smallest: float) -> int:
    """How many pairs in all would shrink the interval to ±``smallest`` (it narrows as 1/sqrt(n))."""
    seen = evidence.could_see
    if seen <= smallest:
        return pairs
    return int(math.ceil(pairs * (math.log1p(seen) / math.log1p(smallest)) ** 2))
