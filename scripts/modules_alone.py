"""Run every test module by itself, each in a fresh pytest process, and name any that fails alone:
a test that passes only after another one ran depends on what that one left behind.

    .venv/bin/python scripts/modules_alone.py [--only TEXT] [--jobs 2] [--timeout 1200] [-- PYTEST ARGS]

Prints one line per module (passed / FAILED / timed out, its time; under a failed one, the
order's seed and each failed test with its reason) and last
``N modules alone: P passed, F failed``. ``--jobs`` runs that many modules at once (each still
alone in its own process; two suit a 2-core machine). Not part of the suite run (each module pays
for its own servers' start): README gives its time.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_alone(module: Path, timeout: float, pytest_args: list[str]) -> tuple[str, float, str, list[str]]:
    """(verdict, seconds, pytest's last line, what to rerun a failure with: the order's seed and
    each failed test with its reason) of one module in a pytest process of its own."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    seed = random.randrange(2**32)      # pytest -q prints no header: the order's seed is chosen here
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                               str(module.relative_to(ROOT)), f"--randomly-seed={seed}", *pytest_args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout, start_new_session=True)
        verdict = "passed" if done.returncode in (0, 5) else "FAILED"
        lines = done.stdout.strip().splitlines()
        last = (lines or [""])[-1]
        # a failure under another module's load may not come back alone: keep what reruns it
        details = [f"rerun: pytest {module.relative_to(ROOT)} --randomly-seed={seed}"] + [
            line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    except subprocess.TimeoutExpired:
        verdict, last, details = "timed out", f"over {timeout:.0f} s", []
    return verdict, time.monotonic() - started, last, details


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only modules whose name contains this text")
    parser.add_argument("--jobs", type=int, default=1, help="modules run at once, each alone in its process")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per module")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    modules = sorted(p for p in (ROOT / "tests").glob("test_*.py") if args.only in p.name)
    failed = []
    began = time.monotonic()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        runs = pool.map(lambda m: (m, *run_alone(m, args.timeout, args.pytest_args)), modules)
        for module, verdict, seconds, last, details in runs:
            print(f"{verdict:>9}  {seconds:7.1f} s  {module.name}  {last}", flush=True)
            if verdict != "passed":
                failed.append(module.name)
                for line in details:
                    print(f"{'':>22}{line[:300]}", flush=True)
    print(f"{len(modules)} modules alone in {(time.monotonic() - began) / 60:.1f} min: "
          f"{len(modules) - len(failed)} passed, {len(failed)} failed" + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
