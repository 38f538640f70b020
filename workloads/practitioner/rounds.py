"""One round of the practitioner benchmark: a fresh Tickbench user and a fresh hand-written process,
in random order, on the same (day, symbol) sequence.

Why fresh on both sides: a process's allocator and heap make it faster or slower than the next one
for its whole life (a DuckDB read differed 1 % between settled processes, 20 % between plain ones).
A hand-written process kept for a whole benchmark run is one draw of that luck, the same in every
round, so no interval over rounds can see it, and the next run of the benchmark draws another: the
cells moved between runs by more than their intervals said. Started afresh each round, the way a
Tickbench user starts (forked from the same preloaded server, or spawned; the same process
conditions, ``workloads.run.processes``), each round draws its own luck on both sides and the
rounds' spread holds it.

Why random order: whichever side runs first runs after the other's teardown (a run's results being
written, a process's memory given back). Each pair of a cell's rounds takes both orders, which first
a seeded coin picks: an order's effect then falls on both sides alike in every cell, not only on
average (a coin per round gave one cell all of its 8 rounds in one order).

The sequence: user 0 of a Tickbench step draws (day, key) from its seeded generator
(``workloads.run.worker``), warm-ups first. A random-draw workload (slices, bars) is run with
``WARMUPS`` warm-ups, the most a worker makes, so the draws its measured operations take are known
before it runs and the hand-written side, which may go first, replays the same warm-ups and the same
measured draws. Days-in-turn workloads (read-day, the tick pack's) read the days in turn from the
first whatever the warm-up: each side warms up by the worker's own rule.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from workloads.run.warmup import MAX_OPS, more_warmup

WARMUPS = MAX_OPS
DAYS_IN_TURN = ("read-day", "asof-join", "snapshot")     # user 0 asks about the days in turn from the first
TICKBENCH_FIRST, HAND_FIRST = "Tickbench first", "by hand first"


def warmups_for(workload: str) -> int:
    """The scenario's warm-up minimum: fixed for random draws, the worker's rule otherwise."""
    return 1 if workload in DAYS_IN_TURN else WARMUPS


def drawn_sequence(workload: str, layout, seed: int, warmups: int, measured: int) -> tuple[list, list]:
    """The (day, key) of each warm-up and each measured operation of user 0 in step 0: the worker's
    seeded generator replayed (SeedSequence([seed, step, worker])); its warm-ups draw first."""
    if workload in DAYS_IN_TURN:
        turn = [(layout.days[i % len(layout.days)], "") for i in range(max(warmups, measured))]
        return turn[:warmups], turn[:measured]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0, 0]))
    drawn = [(layout.days[int(rng.integers(len(layout.days)))],
              layout.keys_sample[int(rng.integers(len(layout.keys_sample)))]) for _ in range(warmups + measured)]
    return drawn[:warmups], drawn[warmups:]


def orders(seed: int | Sequence[int]):
    """One cell's rounds' orders: each pair of rounds both orders, which first a seeded coin picks."""
    rng = np.random.default_rng(seed)
    while True:
        first, second = (HAND_FIRST, TICKBENCH_FIRST) if rng.integers(2) else (TICKBENCH_FIRST, HAND_FIRST)
        yield first
        yield second


@dataclass
class CellRounds:
    """What a cell's rounds measured: per round Tickbench's seconds beside the hand-written ones
    (the same draws in the same order), the order the coin gave, the hand-written process's pid
    and the rows each hand-written call returned."""
    pairs: list[tuple[list[float], list[float]]] = field(default_factory=list)
    orders: list[str] = field(default_factory=list)
    hand_pids: list[int] = field(default_factory=list)
    hand_rows: list[list[int]] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    how: str = ""


def run_cell(run: Callable[[object], str], store, scenario, layout, op: str, coin: Iterator[str],
             go_on: Callable[[list, float], bool]) -> CellRounds:
    """Rounds of ``scenario`` (one user, ``op``'s workload) beside its hand-written path while
    ``go_on(pairs so far, seconds spent)``, in the order ``coin`` gives (``play_round``)."""
    cell, began = CellRounds(), time.monotonic()
    while go_on(cell.pairs, time.monotonic() - began):
        play_round(run, store, scenario, layout, op, next(coin), cell)
    return cell


def play_round(run: Callable[[object], str], store, scenario, layout, op: str, order: str, cell: CellRounds) -> None:
    """One round added to ``cell``: a Tickbench run of ``scenario`` (``run(scenario)`` gives its id in
    ``store``) and a fresh ``HandProcess`` on the same draws, the side ``order`` names first."""
    from workloads.run.records import MEASURED, WARMUP

    least = scenario.warmup_ops
    rule = least if scenario.workload in DAYS_IN_TURN else None
    warmups, measured = drawn_sequence(scenario.workload, layout, scenario.scale.seed,
                                       MAX_OPS if rule else least, scenario.operations)
    if order == HAND_FIRST:
        hand = _hand_round(scenario, layout, op, warmups, measured, rule)
    run_id = run(scenario)
    stored = store.ops(run_id, (MEASURED,))
    made_warmups = len(store.ops(run_id, (WARMUP,)))
    if order == HAND_FIRST and (rule is None and made_warmups != least or len(stored) != len(measured)):
        order = TICKBENCH_FIRST     # the run drew others (its warm-up cut by its budget): ask them after
    if order == TICKBENCH_FIRST:
        _, now = drawn_sequence(scenario.workload, layout, scenario.scale.seed, made_warmups, len(stored))
        hand = _hand_round(scenario, layout, op, warmups, now, rule)
    (cell.how, seconds, rows), pid = hand
    cell.pairs.append(([float(s) for s in stored["total_s"]], seconds))
    cell.orders.append(order)
    cell.hand_pids.append(pid)
    cell.hand_rows.append(rows)
    cell.run_ids.append(run_id)


def _hand_round(scenario, layout, op, warmups, measured, rule):
    hand = HandProcess(scenario.target, scenario.target_config, layout, scenario.start)
    try:
        return hand.time(op, warmups, measured, rule), hand.facts["pid"]
    finally:
        hand.close()


class HandProcess:
    """The hand-written paths of one engine in a process started as a Tickbench user of ``start`` is,
    for one round: ``time`` one or more sequences, then ``close``. ``facts`` says what it is (its
    pid, how it started, its allocator) and which operations the engine has a path for."""

    def __init__(self, kind: str, config: dict, layout, start: str):
        from workloads.run.processes import preload_for, user_context

        context = user_context(start, preload_for(kind))
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_hand_main, args=(kind, config, layout, child, dict(os.environ)),
                                       daemon=True)
        self.process.start()
        child.close()
        self.facts = self._answer()

    def time(self, op: str, warmups: list[tuple], measured: list[tuple],
             rule_minimum: int | None = None) -> tuple[str, list[float], list[int]]:
        """(the path's description, the seconds and the rows of each measured call) after the warm-up: every one
        of ``warmups``, or with ``rule_minimum`` as many of them as the worker's rule makes with that
        minimum (``workloads.run.warmup``: ``warmups`` must then hold ``MAX_OPS``)."""
        self.conn.send((op, warmups, measured, rule_minimum))
        return self._answer()

    def _answer(self):
        if not self.conn.poll(600):
            raise RuntimeError("the hand-written process did not answer in 10 minutes")
        answer = self.conn.recv()
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def close(self) -> None:
        try:
            self.conn.send(None)        # asks it to close its paths and end
        except OSError:
            pass                        # it has ended already (its pipe is closed): joined below
        self.process.join(30)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


def _hand_main(kind: str, config: dict, layout, conn, environ: dict) -> None:
    from workloads.run.processes import enter_user, preload_for
    # the conditions a Tickbench user runs under: forked from the preloaded server (or spawned),
    # the run's environment, threads given back, a long-lived client's allocator
    conditions = enter_user("settled", [0, 0, 0], preload_for(kind), environ)
    from workloads.practitioner import paths_for
    from workloads.targets import make_target

    try:
        practitioner = paths_for(kind, make_target(kind, config), layout)
        practitioner.open()         # untimed; the run's users have let the folder go
    except Exception as exc:
        conn.send(RuntimeError(f"{kind} by hand: {type(exc).__name__}: {exc}"))
        return
    try:
        paths = practitioner.paths()
        conn.send({"pid": os.getpid(), "ops": tuple(paths), **conditions})
        while (asked := conn.recv()) is not None:
            op, warmups, measured, rule_minimum = asked
            try:
                conn.send((paths[op].how, *_timed(paths[op].call, warmups, measured, rule_minimum)))
            except Exception as exc:        # the benchmark says what failed, and stops
                conn.send(RuntimeError(f"{kind} {op} by hand: {type(exc).__name__}: {exc}"))
    finally:
        practitioner.close()


def _timed(call, warmups: list[tuple], measured: list[tuple],
           rule_minimum: int | None) -> tuple[list[float], list[int]]:
    warm: list[float] = []
    while (more_warmup(warm, rule_minimum) if rule_minimum is not None else len(warm) < len(warmups)):
        day, key = warmups[len(warm)]
        began = time.perf_counter()
        result = call(day, key)
        warm.append(time.perf_counter() - began)
        del result
    seconds, rows = [], []
    for day, key in measured:
        began = time.perf_counter()
        result = call(day, key)
        seconds.append(time.perf_counter() - began)
        rows.append(len(result))
        del result          # freed before the next call, as the workers do
    return seconds, rows
