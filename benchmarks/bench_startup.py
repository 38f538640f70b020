"""Start-up to a usable window: launch the app offscreen, time until its "ready" line.

    .venv/bin/python benchmarks/bench_startup.py [--runs 5] [--command "dist/tickbench/tickbench"]
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


def launch(command: list[str]) -> tuple[float, float]:
    """(seconds from exec to the ready line, seconds the app reports from its own start)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TICKBENCH_HOME": tmp,
               "XDG_CONFIG_HOME": tmp}
        started = time.perf_counter()
        proc = subprocess.Popen([*command, "--quit-after", "0.2"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=env)
        for line in proc.stdout:
            if line.startswith("tickbench ready in"):
                wall = time.perf_counter() - started
                reported = float(line.split()[3])
                proc.wait(30)
                return wall, reported
        proc.wait(30)
    raise RuntimeError(f"no ready line from {command} (exit {proc.returncode})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--command", default=f"{sys.executable} -m app")
    args = parser.parse_args()
    command = shlex.split(args.command)
    launch(command)  # warm the page cache: the first launch after install reads everything from disk
    results = [launch(command) for _ in range(args.runs)]
    walls = [w for w, _ in results]
    print(f"{args.command}: launch to usable window, {args.runs} runs: median {statistics.median(walls):.2f} s, "
          f"best {min(walls):.2f} s, worst {max(walls):.2f} s "
          f"(in-app part median {statistics.median(r for _, r in results):.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
