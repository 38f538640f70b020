import pytest


SPUN = """
import json, multiprocessing as mp, time
import psutil
from workloads.run.sampler import ResourceSampler


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def cpu_seconds(processes):
    return sum(sum(psutil.Process(p.pid).cpu_times()[:2]) for p in processes)


if __name__ == "__main__":
    sampler = ResourceSampler()
    children = [mp.get_context("fork").Process(target=spin, args=(4.0,)) for _ in range(3)]
    for child in children:
        child.start()
    time.sleep(0.5)
    sampler.sample(0.0)                          # first sight of the children: primes their counters
    points, spent = [], []
    for _ in range(3):
        before, began = cpu_seconds(children), time.monotonic()
        time.sleep(0.5)
        point = sampler.sample(0.0)
        points.append([point.cpu_percent, point.rss_bytes])
        spent.append((cpu_seconds(children) - before) / (time.monotonic() - began) * 100)
    print(json.dumps({"points": points, "spent": spent, "own_pss": psutil.Process().memory_full_info().pss,
                      "cpus": psutil.cpu_count()}))
    for child in children:
        child.join(10)
"""


def _run_alone(script: str) -> dict:
    """Runs a sampling script in a process of its own, so that no process another test started
    (a fixture's server, a forkserver) is among the sampled."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parent.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_children_are_counted_within_possible_cpu_figures():
    """The sampler's CPU figure over an interval is what the children spent in it, by their own
    counters (a relative check: a loaded machine gives the spinners less, and both figures say so)."""
    figures = _run_alone(SPUN)   # forked spinners: a -c script has no module a spawned child could import
    cpu = [point[0] for point in figures["points"]]
    spent = figures["spent"]
    ceiling = 100.0 * figures["cpus"] * 1.2     # all cores busy, plus sampling slack
    assert all(0.0 <= p <= ceiling for p in cpu), cpu
    assert spent[-1] > 10                                        # the spinners did spin
    # the spinning children are counted: the figure is theirs, within sampling's slack
    assert cpu[-1] == pytest.approx(spent[-1], rel=0.3, abs=10), figures
    assert figures["points"][-1][1] > figures["own_pss"]            # the children's memory is counted too


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
    figures = _run_alone(SAMPLED)
    assert figures["kind"] == "PSS"
    assert figures["held"] == pytest.approx(figures["pss"], rel=0.1), figures
    assert figures["held"] < figures["rss"] / 3, figures          # each user maps ~100 MB of its server's pages
