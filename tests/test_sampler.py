import multiprocessing as mp
import time

import psutil
import pytest

from workloads.run.sampler import ResourceSampler


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _cpu_seconds(processes) -> float:
    return sum(sum(psutil.Process(p.pid).cpu_times()[:2]) for p in processes)


def test_children_are_counted_within_possible_cpu_figures():
    """The sampler's CPU figure over an interval is what the children spent in it, by their own
    counters (a relative check: a loaded machine gives the spinners less, and both figures say so)."""
    sampler = ResourceSampler()
    ctx = mp.get_context("spawn")
    children = [ctx.Process(target=_spin, args=(4.0,)) for _ in range(3)]
    for child in children:
        child.start()
    try:
        time.sleep(0.5)
        sampler.sample(0.0)                          # first sight of the children: primes their counters
        points, spent = [], []
        for _ in range(3):
            before, began = _cpu_seconds(children), time.monotonic()
            time.sleep(0.5)
            points.append(sampler.sample(0.0))
            spent.append((_cpu_seconds(children) - before) / (time.monotonic() - began) * 100)
        ceiling = 100.0 * psutil.cpu_count() * 1.2  # all cores busy, plus sampling slack
        assert all(0.0 <= p.cpu_percent <= ceiling for p in points), [p.cpu_percent for p in points]
        assert spent[-1] > 10                                        # the spinners did spin
        # the spinning children are counted: the figure is theirs, within sampling's slack
        assert points[-1].cpu_percent == pytest.approx(spent[-1], rel=0.3, abs=10), (points, spent)
        assert points[-1].rss_bytes > psutil.Process().memory_info().rss
    finally:
        for child in children:
            child.join(10)


def test_forked_users_memory_counts_the_pages_they_share_with_their_server_once():
    """PSS, not RSS: 12 users forked from a server that imported pandas and pyarrow hold far less
    than 12 times what each maps (the sum of RSS counts every shared page once per user)."""
    from workloads.run import processes
    from workloads.run.sampler import ResourceSampler

    context = processes.user_context("forkserver", processes.preload_for("duckdb"))
    users = [context.Process(target=time.sleep, args=(30,)) for _ in range(12)]
    for user in users:
        user.start()
    try:
        time.sleep(1.0)
        sampler = ResourceSampler()
        assert sampler.memory_kind == "PSS"
        held = sampler.sample(0.0).rss_bytes
        family = [psutil.Process(u.pid) for u in users] + [psutil.Process(processes.forkserver_pid())]
        rss = sum(p.memory_info().rss for p in family) + psutil.Process().memory_info().rss
        pss = sum(p.memory_full_info().pss for p in family) + psutil.Process().memory_full_info().pss
        assert held == pytest.approx(pss, rel=0.1), (held, pss)
        assert held < rss / 3, (held, rss)          # each user maps ~100 MB of its server's pages
    finally:
        for user in users:
            user.kill()
            user.join(10)
