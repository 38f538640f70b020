"""Locust's own cost per request, for ``bench_harness.py`` to print beside Tickbench's: one Locust
user whose task times a no-op call as Locust's HTTP clients time a request (a perf_counter pair) and
fires Locust's request event with it, so every request goes through Locust's statistics; no wait
between tasks. Runs in a process of its own: Locust patches the standard library with gevent.

    .venv/bin/python benchmarks/locust_noop.py [--seconds 5]

Prints one line: ``locust R requests in S s: X us per request``.
"""
from __future__ import annotations

import argparse
import time

from gevent import monkey

monkey.patch_all()

import gevent  # noqa: E402
from locust import User, constant, task  # noqa: E402
from locust.env import Environment  # noqa: E402


def _noop():
    return None


class NoOpUser(User):
    wait_time = constant(0)

    @task
    def noop(self) -> None:
        began = time.perf_counter()
        _noop()
        elapsed_ms = (time.perf_counter() - began) * 1000
        self.environment.events.request.fire(request_type="noop", name="noop", response_time=elapsed_ms,
                                             response_length=0, exception=None, context={})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    environment = Environment(user_classes=[NoOpUser])
    runner = environment.create_local_runner()
    runner.start(1, spawn_rate=1)
    while runner.user_count < 1:                  # the user spawned: time only its requests
        gevent.sleep(0.01)
    before = environment.stats.total.num_requests
    began = time.perf_counter()
    gevent.sleep(args.seconds)
    requests = environment.stats.total.num_requests - before
    seconds = time.perf_counter() - began
    runner.quit()
    print(f"locust {requests} requests in {seconds:.2f} s: {seconds / requests * 1e6:.2f} us per request")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
