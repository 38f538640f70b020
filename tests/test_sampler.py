import multiprocessing as mp
import time

import psutil

from workloads.sampler import ResourceSampler


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_children_are_counted_within_possible_cpu_figures():
    sampler = ResourceSampler()
    ctx = mp.get_context("spawn")
    children = [ctx.Process(target=_spin, args=(3.0,)) for _ in range(3)]
    for child in children:
        child.start()
    try:
        time.sleep(0.5)
        points = []
        for _ in range(3):
            points.append(sampler.sample(0.0))   # first sight of the children, then real readings
            time.sleep(0.5)
        ceiling = 100.0 * psutil.cpu_count() * 1.2  # all cores busy, plus sampling slack
        assert all(0.0 <= p.cpu_percent <= ceiling for p in points), [p.cpu_percent for p in points]
        assert points[-1].cpu_percent > 50          # the spinning children are counted
        assert points[-1].rss_bytes > psutil.Process().memory_info().rss
    finally:
        for child in children:
            child.join(10)
