"""Two runs interleaved operation by operation: A's user makes one operation, then B's, then A's ...

``tickbench ab`` pairs A with B to cancel what the machine does between them. Run by run (A's
whole run, then B's), a drift of the machine that lasts a second or so still falls on one side: a
DuckDB read of a day here swings between about 7 and 11 ms in stretches of 0.3-3 s, in one process
left alone. Taking turns operation by operation, the two sides meet each stretch alike, and a
pair's ratio keeps only what differs between them.

The two runs are normal runs (their own fresh user processes, their own records in the catalog),
started together by two ``Runner`` threads of one process. Each pair of users (A's user i and B's
user i) takes turns through two semaphores: a user waits for its turn, times its operation, and
hands the turn over; the wait is outside every operation's timing. When one side's user is done
(its duration, its operations, a failure, a cancel) the other's stops at its next turn, so both
measured the same stretch of time. The runners meet (``Partner.meet``) after both laid out their data
(no side's users start while the other still writes its files), then at every step when both
steps' users are ready and both released them in the catalog (so neither side's first operations
share the machine with the other runner's writes), and when both sides' measured operations are
over (so neither side's last ones share it with the other's reading of its figures).

Only closed-loop, warm, read-only steps on this machine interleave (``why_not_together``): a cold
step's clears, an open-loop schedule or writes to a shared table would make one side's work the
other's condition.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

TURN_POLL_S = 0.05          # how often a waiting user looks whether its partner is done
MEET_TIMEOUT_S = 600.0      # the longest one side waits for the other to lay out or start its users


@dataclass(frozen=True)
class Turn:
    """One user's side of a pair of users taking turns (passed to its process when it starts)."""

    mine: Any                # semaphore: released when this user may make its next operation
    theirs: Any              # the partner's
    my_end: Any              # event: this user is done
    their_end: Any           # the partner's

    def wait(self, stop_event) -> bool:
        """Wait for this user's turn; False when the partner is done (or the step stopped)."""
        while not self.mine.acquire(timeout=TURN_POLL_S):
            if self.their_end.is_set() or stop_event.is_set():
                return False
        return not self.their_end.is_set()

    def hand_over(self) -> None:
        self.theirs.release()

    def finish(self) -> None:
        """This user is done: the partner stops at its next turn rather than waiting for one."""
        self.my_end.set()
        self.theirs.release()


class TurnTable:
    """What the two runners of an interleaved pair share: their meetings and each step's turns.
    ``first`` is the side whose users make the first operation of every step."""

    def __init__(self, first: str = "A", run_ids: dict[str, str] | None = None, targets: tuple[str, ...] = ()):
        if first not in ("A", "B"):
            raise ValueError(f"first side: A or B, not {first!r}")
        self.first = first
        self.run_ids = dict(run_ids or {})
        self.targets = tuple(targets)       # both sides' target kinds: their users share one forkserver
        self._barrier = threading.Barrier(2)
        self._lock = threading.Lock()
        self._turns: dict[tuple[int, int], dict[str, Turn]] = {}
        self._left: set[str] = set()

    def side(self, name: str) -> Partner:
        return Partner(self, name)

    def turns(self, context, step: int, users: int, side: str) -> list[Turn]:
        """``side``'s turn for each of its ``users`` at ``step``; made once, from ``context`` (the
        runners' multiprocessing context), by whichever runner asks first."""
        with self._lock:
            out = []
            for user in range(users):
                pair = self._turns.get((step, user))
                if pair is None:
                    sems = {s: context.Semaphore(1 if s == self.first else 0) for s in "AB"}
                    ends = {s: context.Event() for s in "AB"}
                    pair = {s: Turn(sems[s], sems[o], ends[s], ends[o]) for s, o in (("A", "B"), ("B", "A"))}
                    self._turns[(step, user)] = pair
                    for gone in self._left:       # a side that has ended takes no turn
                        pair[gone].finish()
                out.append(pair[side])
            return out

    def meet(self, timeout_s: float = MEET_TIMEOUT_S) -> bool:
        """Wait for the other runner to get here; False when it cannot (it ended, or failed)."""
        try:
            self._barrier.wait(timeout_s)
            return True
        except threading.BrokenBarrierError:
            return False

    def end_step(self, side: str, step: int) -> None:
        """``side``'s users at ``step`` are done however they ended (a user killed never said so
        itself): the other side's stop at their next turn."""
        with self._lock:
            for (at, _user), pair in self._turns.items():
                if at == step:
                    pair[side].finish()

    def leave(self, side: str) -> None:
        """``side``'s runner has ended: no meeting waits for it, no user waits for a turn from it."""
        self._barrier.abort()
        with self._lock:
            self._left.add(side)
            for pair in self._turns.values():
                pair[side].finish()


@dataclass(frozen=True)
class Partner:
    """One runner's view of its interleaved pair."""

    table: TurnTable
    side: str

    @property
    def other_run_id(self) -> str:
        return self.table.run_ids.get("B" if self.side == "A" else "A", "")

    def meet(self) -> bool:
        return self.table.meet()

    def turns(self, context, step: int, users: int) -> list[Turn]:
        return self.table.turns(context, step, users, self.side)

    def end_step(self, step: int) -> None:
        self.table.end_step(self.side, step)

    def leave(self) -> None:
        self.table.leave(self.side)

    def record(self) -> dict[str, Any]:
        """What the run's record says of it (its environment's ``interleaved``)."""
        return {"with_run": self.other_run_id, "side": self.side, "first": self.table.first,
                "by": "operation: each user took turns with the other run's user of the same index"}


def why_not_together(workload, scenario) -> str:
    """Why ``scenario``'s steps cannot take turns with another run's ("" when they can)."""
    if getattr(workload, "writes", False):
        return f"{scenario.workload} writes"
    if scenario.cache == "cold":
        return "a cold step clears caches between operations"
    if scenario.scheduler:
        return "its users run on a Dask cluster"
    if scenario.rate:
        return "an open-loop schedule sets when its operations start"
    return ""


def together_refusal(scenario_a, scenario_b) -> str:
    """Why A's and B's users cannot take turns ("" when they can)."""
    from workloads.operations import get_workload
    for side, scenario in (("A", scenario_a), ("B", scenario_b)):
        why = why_not_together(get_workload(scenario.workload), scenario)
        if why:
            return f"{side}: {why}"
    if scenario_a.users != scenario_b.users or scenario_a.rate != scenario_b.rate:
        return "A and B step through different users or rates"
    if scenario_a.start != scenario_b.start:
        return f"A's users start by {scenario_a.start}, B's by {scenario_b.start}"
    return ""


def took_turns_with(environment: dict | None) -> str:
    """The run whose users this run's took turns with (its record's ``interleaved``), or ""."""
    return str(((environment or {}).get("interleaved") or {}).get("with_run") or "")


def turns_note(environment: dict | None) -> str:
    """What a reader of a run's figures must know when its users took turns, or ""."""
    other = took_turns_with(environment)
    return (f"each operation took turns with one of run {other}'s (tickbench ab): none ran beside another, "
            "each followed one of the other's, and the waits are in no figure") if other else ""


def pairs_words(interleave: str, why: str = "") -> str:
    """How an A/B session's pairs ran, with the condition it puts on every figure (the command
    line and the window say it alike)."""
    if interleave == "operations":
        return ("pairs: each pair's two runs side by side, their users taking turns operation by operation "
                "(the first side at random); each operation followed one of the other side's, none ran "
                "beside one, and the waits are in no figure")
    return "pairs: one run after the other" + (f" (not taking turns: {why})" if why else "")
