"""An A/B session: scenarios A and B run as interleaved repetitions, each a normal run (a fresh set
of user processes, stored in the catalog like any run), and verdicts from the paired repetitions.

Pairs run one after the other; within each pair A or B goes first at random (seeded, recorded), so
the sequence reads A B B A A B ... (Google Benchmark's random interleaving): a drift of the machine
is shared by a pair and cancels in its ratio, and no side always runs second. Where both sides can
(``interleave="auto"``: warm, closed-loop, read-only, on this machine), a pair's two runs go side by
side and their users take turns operation by operation (``workloads.run.turns``), the side going
first at random: a drift shorter than a run then cancels too. Otherwise (or ``"runs"``) a pair's
runs go one after the other; the record says which, and why. Each figure's verdict
is ``workloads.results.evidence.paired`` over the kept pairs (the Hodges-Lehmann centre of the ratios B / A
with Wilcoxon's signed-rank 95 % interval) and ``verdict_of``.

The session stops early, from ``MIN_PAIRS`` pairs on, when the primary figure (p50 by default) is
settled at every step: its 99 % interval (stricter: the session looks after every pair) wholly beyond
the noise floor, or its 95 % interval wholly within ±``smallest``. Otherwise it runs on to
``max_pairs`` or ``budget_s`` and says how many pairs would settle it.

A repetition that fails is dropped with its reason, and so is its pair. ``should_stop()`` (Ctrl-C)
cancels the current run; every completed run stays in the catalog. The session's record is one
JSON file in the catalog's ``ab/`` folder (``load_ab``).

``run_ab`` is synchronous, as ``Runner.run()`` is: the command line and tests call it directly.
"""
from __future__ import annotations

import random
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from workloads.results.strict_json import finite_only
from workloads.results.evidence import CANNOT_TELL, LEVEL, MIN_PAIRS
# the judging lives in ab_verdicts; its names stay importable from here, where callers look for them
from workloads.run.ab_verdicts import (FIGURE_NAMES, STRICT_LEVEL, FigureVerdict, Pair, Repetition,  # noqa: F401
                                       StepKey, figures_of, needed_pairs, paired_values, settled, steps_of,
                                       too_short, verdicts_of)
from workloads.run.ab_records import AB_DIR, ab_path, load_ab, new_ab_id, save_ab  # noqa: F401 (the session's record)
from workloads.run.runner import Runner, check_scenario, new_run_id, public_scenario
from workloads.run.turns import Partner, TurnTable, together_refusal
from workloads.scenario import Scenario

INTERLEAVES = ("auto", "operations", "runs")
FAIL_STREAK = 3                 # repetitions failing in a row end the session: the next would too


@dataclass
class AbProgress:
    """What the session is doing now, for a progress bar: ``runner`` is the run under way (None
    between runs) and ``text`` says it in words."""
    pair: int                   # 1-based
    max_pairs: int
    side: str
    text: str
    runner: Runner | None = None


@dataclass
class AbResult:
    ab_id: str
    status: str                 # running | completed | cancelled | failed
    scenario_a: dict[str, Any]
    scenario_b: dict[str, Any]
    seed: int
    primary: str
    smallest: float
    max_pairs: int
    pairs: list[Pair] = field(default_factory=list)
    verdicts: list[FigureVerdict] = field(default_factory=list)
    outcome: str = ""           # clear | inconclusive | too few | cancelled | failed
    stop: str = ""              # "clear after 7 pairs", "inconclusive after 20 pairs: needs about 34 to see ±5 %"
    needs_pairs: int | None = None
    message: str = ""
    elapsed_s: float = 0.0
    started_at: str = ""
    interleave: str = "runs"    # "operations" (a pair's users took turns) | "runs" (one run after the other)
    interleave_why: str = ""    # why not by operations, where it was asked for

    @property
    def kept(self) -> int:
        return sum(p.kept for p in self.pairs)

    @property
    def order(self) -> str:
        return " ".join(" ".join(p.order) for p in self.pairs)

    def dropped(self) -> list[dict[str, Any]]:
        """Every repetition not used, with why: its own failure, or its partner's."""
        out = []
        for p in self.pairs:
            if p.kept:
                continue
            for rep in (p.a, p.b):
                if rep is None:
                    continue
                partner = p.b if rep is p.a else p.a
                reason = _reason(rep) if not rep.ok else \
                    f"its pair's {partner.side} {_reason(partner)}" if partner is not None else "its pair was not finished"
                out.append({"pair": p.index + 1, "side": rep.side, "run_id": rep.run_id, "reason": reason})
        return out

    def primary_verdicts(self) -> list[FigureVerdict]:
        return [v for v in self.verdicts if v.figure == self.primary]

    def answered(self) -> bool:
        """An answer (a difference, or none this machine can see) at every step's primary figure."""
        found = self.primary_verdicts()
        return bool(found) and all(v.verdict != CANNOT_TELL for v in found)

    def to_dict(self) -> dict[str, Any]:
        """Plain data, strict JSON (no NaN or infinity: None instead)."""
        return finite_only({
            "ab_id": self.ab_id, "status": self.status, "outcome": self.outcome, "stop": self.stop,
            "message": self.message, "started_at": self.started_at, "elapsed_s": round(self.elapsed_s, 3),
            "scenario_a": self.scenario_a, "scenario_b": self.scenario_b,
            "seed": self.seed, "primary": self.primary, "smallest": self.smallest, "max_pairs": self.max_pairs,
            "order": self.order, "interleave": self.interleave, "interleave_why": self.interleave_why,
            "kept_pairs": self.kept, "pairs_run": len(self.pairs),
            "needs_pairs": self.needs_pairs,
            "pairs": [{"pair": p.index + 1, "order": p.order, "kept": p.kept,
                       "a": p.a.run_id if p.a else None, "b": p.b.run_id if p.b else None} for p in self.pairs],
            "dropped": self.dropped(),
            "verdicts": [v.to_dict() for v in self.verdicts],
        })


def _reason(rep: Repetition) -> str:
    return f"{rep.status}" + (f": {rep.message}" if rep.message else "")


def orders(count: int, seed: int) -> list[str]:
    """Which side runs first in each of ``count`` pairs: "AB" or "BA", at random from ``seed``."""
    rng = random.Random(seed)
    return [rng.choice(("AB", "BA")) for _ in range(count)]


# ---- the session -----------------------------------------------------------------------------
def run_ab(scenario_a: Scenario, scenario_b: Scenario, store, *, max_pairs: int = 20, smallest: float = 0.05,
           budget_s: float | None = None, seed: int | None = None, primary: str = "p50",
           on_progress: Callable[[AbProgress], None] | None = None,
           should_stop: Callable[[], bool] | None = None, interleave: str = "auto") -> AbResult:
    """Run A and B as interleaved pairs of repetitions into ``store`` and judge them (module doc).
    ValueError before anything runs when a scenario cannot run or an option is out of range."""
    if max_pairs < 1:
        raise ValueError(f"max pairs: at least 1, not {max_pairs}")
    if not (0 < smallest < 1):
        raise ValueError(f"smallest change: a fraction above 0 and under 1 (0.05: 5 %), not {smallest}")
    if primary not in FIGURE_NAMES:
        raise ValueError(f"figure: one of {', '.join(FIGURE_NAMES)}, not {primary!r}")
    if budget_s is not None and not budget_s > 0:
        raise ValueError(f"budget: a time above 0, not {budget_s}")
    check_scenario(scenario_a)
    check_scenario(scenario_b)
    why = together_refusal(scenario_a, scenario_b)
    if interleave not in INTERLEAVES:
        raise ValueError(f"interleave: one of {', '.join(INTERLEAVES)}, not {interleave!r}")
    if interleave == "operations" and why:
        raise ValueError(f"A and B cannot take turns operation by operation: {why}")
    seed = secrets.randbits(32) if seed is None else int(seed)
    ab_id = new_ab_id()
    sides = {"A": scenario_a.with_changes(name=f"A/B {ab_id} · A"),
             "B": scenario_b.with_changes(name=f"A/B {ab_id} · B")}
    result = AbResult(ab_id, "running", public_scenario(scenario_a), public_scenario(scenario_b), seed, primary, smallest,
                      max_pairs, started_at=datetime.now().isoformat(timespec="seconds"),
                      interleave="runs" if why or interleave == "runs" else "operations",
                      interleave_why=why if interleave == "auto" else "")
    session = _Session(result, sides, store, budget_s, on_progress, should_stop or (lambda: False))
    return session.run()


def run_pair(sides: dict[str, Scenario], store, pair: Pair, together: bool = True) -> Pair:
    """One pair as a session runs it, outside a session (``benchmarks/bench_verdicts.py``): its runs
    side by side taking turns (``together``), or one after the other in ``pair.order``."""
    session = _Session(None, sides, store, None, None, lambda: False)
    if together:
        session._repeat_together(pair)
    for side in pair.order if not together else ():
        setattr(pair, side.lower(), session._repeat(pair, side))
    return pair


class _Session:
    def __init__(self, result: AbResult, sides: dict[str, Scenario], store, budget_s, on_progress, should_stop):
        self.result, self.sides, self.store = result, sides, store
        self.budget_s, self.on_progress, self.should_stop = budget_s, on_progress, should_stop
        self.t0 = time.monotonic()
        self.cancelled = False
        self.fail_streak = 0

    def _tell(self, pair: int, side: str, text: str, runner: Runner | None = None) -> None:
        if self.on_progress is not None:
            self.on_progress(AbProgress(pair, self.result.max_pairs, side, text, runner))

    def run(self) -> AbResult:
        result = self.result
        save_ab(self.store, result)
        try:
            self._prepare()
        except Exception as exc:  # the target could not be laid out: no pair can run
            from workloads.run.worker import describe_error
            return self._end("failed", "failed", f"preparing the data failed: {describe_error(exc)}", exc)
        budget_spent = False
        for index, order in enumerate(orders(result.max_pairs, result.seed)):
            if self._stopping():
                break
            if self.budget_s is not None and index and time.monotonic() - self.t0 >= self.budget_s:
                budget_spent = True
                break
            pair = Pair(index, order)
            result.pairs.append(pair)
            if result.interleave == "operations":
                self._repeat_together(pair)
            for side in order if result.interleave == "runs" else ():
                rep = self._repeat(pair, side)
                setattr(pair, side.lower(), rep)
                if not rep.ok:
                    break           # its pair is lost: the other side need not run
            self.fail_streak = 0 if pair.kept else self.fail_streak + 1
            self._judge(final=False)
            save_ab(self.store, result)
            if self.cancelled:
                break
            if self.fail_streak >= FAIL_STREAK:
                last = result.dropped()[-1]["reason"] if result.dropped() else "failed"
                return self._end("completed", "failed", f"{FAIL_STREAK} pairs in a row failed; last: {last}")
            if result.kept >= MIN_PAIRS and settled(result.pairs, result.primary, result.smallest):
                return self._end("completed", "clear", f"clear after {result.kept} pairs")
            short = [too_short(result.pairs, key, result.primary) for key, _label in steps_of(result.pairs)]
            short = next(filter(None, short), "")
            if short:               # no number of pairs gives a figure runs this short lack
                return self._end("completed", "too few", f"{result.primary}: {short}; make each run longer")
        if self.cancelled:
            return self._end("cancelled", "cancelled", f"cancelled after {result.kept} kept "
                             f"pair{'s' if result.kept != 1 else ''}; what was measured is kept")
        ran = len(result.pairs)
        if result.kept >= MIN_PAIRS and settled(result.pairs, result.primary, result.smallest, strict_level=LEVEL):
            return self._end("completed", "clear", f"clear after {result.kept} pairs (the last look, at 95 %)")
        if result.kept < MIN_PAIRS:
            return self._end("completed", "too few", f"too few pairs: kept {result.kept} of {ran}; "
                             f"a verdict needs {MIN_PAIRS}")
        self._judge(final=True)
        needs = result.needs_pairs
        spent = f" (the budget of {self.budget_s / 60:g} min is spent)" if budget_spent else ""
        text = f"inconclusive after {ran} pairs{spent}"
        if needs is not None:
            text += f": needs about {needs} to see ±{result.smallest:.0%}".replace("%", " %")
        return self._end("completed", "inconclusive", text)

    def _stopping(self) -> bool:
        if not self.cancelled and self.should_stop():
            self.cancelled = True
        return self.cancelled

    def _prepare(self) -> None:
        """Lay each side's data out before the first pair (untimed, no run stored), so the first
        pair's runs find it laid out as every later one does."""
        from workloads.operations import get_workload
        from workloads.targets import make_target
        done = set()
        for side, scenario in self.sides.items():
            if not get_workload(scenario.workload).uses_target:
                continue
            key = (scenario.target, repr(sorted(scenario.target_config.items())), scenario.dataset,
                   repr(scenario.scale), scenario.strings)
            if key in done:
                continue
            done.add(key)
            self._tell(0, side, f"preparing {scenario.target}'s data for {side}")
            target = make_target(scenario.target, scenario.target_config)
            try:
                target.prepare(scenario.dataset, scenario.scale, scenario.string_mode)
            finally:
                close = getattr(target, "close", None)
                if close is not None:
                    try:
                        close()
                    except Exception:  # closing a connection used to prepare must not stop the session
                        pass

    def _repeat_together(self, pair: Pair) -> None:
        """A pair's two runs side by side, their users taking turns (``pair.order[0]`` first)."""
        ids = {side: new_run_id() for side in "AB"}
        table = TurnTable(pair.order[0], ids, (self.sides["A"].target, self.sides["B"].target))
        reps: dict[str, Repetition] = {}

        def side(name: str) -> None:
            try:
                reps[name] = self._repeat(pair, name, table.side(name), ids[name])
            except Exception as exc:  # a side that could not even start is dropped with its reason
                from workloads.run.worker import describe_error
                reps[name] = Repetition(pair.index, name, "", "failed", describe_error(exc))
            finally:
                table.leave(name)     # however it ended: the other side's users never wait for it
        second = threading.Thread(target=side, args=("B",))
        second.start()
        side("A")
        second.join()
        pair.a, pair.b = reps["A"], reps["B"]

    def _repeat(self, pair: Pair, side: str, partner: Partner | None = None, run_id: str | None = None) -> Repetition:
        """One repetition: a normal run (taking turns with ``partner``'s), watched for a stop request."""
        rep = Repetition(pair.index, side)
        if self._stopping():
            rep.status, rep.message = "cancelled", "not started: the session was stopped"
            return rep
        try:
            runner = Runner(self.sides[side], self.store, run_id=run_id, partner=partner)
        except (ValueError, KeyError) as exc:
            rep.status, rep.message = "failed", str(exc).strip("'\"")
            return rep
        rep.run_id = runner.run_id
        self._tell(pair.index + 1, side, f"pair {pair.index + 1}: {side} ({runner.run_id})", runner)
        watching = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(runner, watching), daemon=True)
        watcher.start()
        try:
            run = runner.run()
            rep.status, rep.message = run.status, run.message
            rep.figures, rep.labels = figures_of(run.figures)
        except Exception as exc:  # a repetition that fails is dropped with its reason, never the session
            from workloads.run.worker import describe_error
            rep.status, rep.message = "failed", describe_error(exc)
        finally:
            watching.set()
            watcher.join()
        if rep.ok and not any(f.get("ops/s", 0) > 0 for f in rep.figures.values()):
            rep.status, rep.message = "failed", "no step measured an operation"
        self._tell(pair.index + 1, side, f"pair {pair.index + 1}: {side} {rep.status}")
        return rep

    def _watch(self, runner: Runner, done: threading.Event) -> None:
        while not done.wait(0.1):
            if self._stopping():
                runner.cancel()
                return

    def _judge(self, final: bool) -> None:
        result = self.result
        result.verdicts = verdicts_of(result.pairs)
        if final:
            result.needs_pairs = needed_pairs(result.pairs, result.primary, result.smallest)
        result.elapsed_s = time.monotonic() - self.t0

    def _end(self, status: str, outcome: str, stop: str, exc: BaseException | None = None) -> AbResult:
        result = self.result
        self._judge(final=outcome not in ("clear",))
        result.status, result.outcome, result.stop = status, outcome, stop
        if exc is not None:
            result.message = stop
        save_ab(self.store, result)
        return result
