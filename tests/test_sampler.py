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


SAMPLED = """
import json, time
import psutil
from workloads.run import processes
from workloads.run.sampler import ResourceSampler

if __name__ == "__main__":
    context = processes.user_context("forkserver", processes.preload_for("duckdb"))
    users = [context.Process(target=time.sleep, args=(30,)) for _ in range(12)]
    for user in users:
        user.start()
    time.sleep(1.0)
    sampler = ResourceSampler()
    held = sampler.sample(0.0).rss_bytes
    family = [psutil.Process()] + psutil.Process().children(recursive=True)
    print(json.dumps({"kind": sampler.memory_kind, "held": held,
                      "pss": sum(p.memory_full_info().pss for p in family),
                      "rss": sum(p.memory_info().rss for p in family)}))
    for user in users:
        user.kill()
"""


def test_forked_users_memory_counts_the_pages_they_share_with_their_server_once():
    """PSS, not RSS: 12 users forked from a server that imported pandas and pyarrow hold far less
    than 12 times what each maps (the sum of RSS counts every shared page once per user). In a
    process of its own, so that no other process a test started is among the sampled."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", SAMPLED], cwd=Path(__file__).resolve().parent.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["kind"] == "PSS"
    assert figures["held"] == pytest.approx(figures["pss"], rel=0.1), figures
    assert figures["held"] < figures["rss"] / 3, figures          # each user maps ~100 MB of its server's pages
