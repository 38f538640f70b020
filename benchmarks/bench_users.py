"""Users at scale: how long a step's users take to start, and the memory each holds, forked from the
preloaded forkserver (the default) against spawned (``--start spawn``).

Each cell is a real ``tickbench run`` in a fresh process (its forkserver started inside it) of one
step: the no-op (a 10 ms answer, so users wait rather than spin) or read-day on DuckDB. While every
user runs, psutil reads each user process's USS (pages only it holds) and PSS (its share of the
pages it shares), for up to 24 users drawn at random (*: "USS all" is their median times the users);
the forkserver and the resource tracker are counted apart. "ready" is the time
from the run's start to the release of the step (every user started, set up and warmed up), as the
run recorded it; "start" the same from the step's start (``users_ready_s``). A 1..128 sweep of 5 s
no-op steps is timed whole, wall clock. The last line:

    128 users ready in X s, USS Y MiB per user (spawn: X0 s, Y0 MiB)

    .venv/bin/python benchmarks/bench_users.py [--users 8,32,128] [--workloads noop,read-day]
        [--rows 200000] [--no-sweep]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
MIB = 2**20
MEMORY_READS = 24          # users whose memory is read in a step (a random draw); all are counted


def _users_of(proc: psutil.Process) -> tuple[list[psutil.Process], list[psutil.Process]]:
    """(the run's user processes, its helpers: the forkserver and the resource tracker)."""
    users, helpers = [], []
    for child in proc.children(recursive=True):
        try:
            line = " ".join(child.cmdline())
        except psutil.Error:
            continue
        parent = child.parent()
        if "resource_tracker" in line or (parent is not None and parent.pid == proc.pid and "forkserver" in line):
            helpers.append(child)
        else:
            users.append(child)
    return users, helpers


def _memory(procs: list[psutil.Process], most: int = MEMORY_READS) -> tuple[list[float], list[float]]:
    """USS and PSS (MiB) of up to ``most`` of ``procs``, drawn at random: reading one costs the kernel
    a walk of its pages, and 128 busy users read one by one outlast a short step."""
    uss, pss = [], []
    for p in random.sample(procs, min(most, len(procs))):
        try:
            info = p.memory_full_info()
        except psutil.Error:
            continue
        uss.append(info.uss / MIB)
        pss.append(info.pss / MIB)
    return uss, pss


def cell(workload: str, users: int, start: str, rows: int, data: Path) -> dict:
    """One run of one step; its start-up times and its users' memory while all ran."""
    with tempfile.TemporaryDirectory() as tmp:
        run_id = f"bench-{workload}-{users}-{start}"
        seconds = 8.0 if workload == "noop" else 10.0
        command = [sys.executable, "-m", "app", "--results", str(Path(tmp) / "results.duckdb"), "run",
                   "--target", "duckdb", "--data-dir", str(data), "--workload", workload, "--users", str(users),
                   "--duration", str(seconds), "--rows-per-day", str(rows), "--days", "1", "--probes", "0",
                   "--start", start, "--run-id", run_id, "--force"]
        if workload == "noop":
            command += ["--param", "hold_s=0.01"]
        began = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        parent = psutil.Process(proc.pid)
        steps = next(Path(tmp).rglob("steps.json"), None)
        sampled: tuple[list[float], list[float], list[float]] | None = None
        released_at, seen = None, 0
        while proc.poll() is None:
            steps = steps or next(Path(tmp).rglob("steps.json"), None)
            if released_at is None and steps is not None and _released(steps):
                released_at = time.monotonic()
            # from half a second into the step: every user past its first operations; the fullest
            # reading is kept (psutil misses a process it reads as another starts or ends)
            if released_at is not None and time.monotonic() - released_at >= 0.5 and \
                    (sampled is None or seen < users):
                found, helpers = _users_of(parent)
                if sampled is None or len(found) > seen:
                    seen = len(found)
                    sampled = (*_memory(found), _memory(helpers)[1])
            time.sleep(0.05)
        if sampled is not None and seen != users:
            print(f"# {run_id}: saw {seen} of its {users} user processes at once", flush=True)
        out = proc.stdout.read()
        wall = time.perf_counter() - began
        if proc.returncode != 0 or sampled is None:
            raise RuntimeError(f"{run_id}: exit {proc.returncode}, sampled={sampled is not None}\n{out[-2000:]}")
        step = json.loads(steps.read_text())[0]
        run = json.loads(next(Path(tmp).rglob("run.json")).read_text())
        environment = run.get("environment") or {}
        environment = json.loads(environment) if isinstance(environment, str) else environment
        facts = json.loads(step.get("facts") or "{}")
        uss, pss, helpers = sampled
        return {"ready_s": float(step["release_clock"]), "start_s": float(facts["users_ready_s"]), "wall_s": wall,
                "uss": statistics.median(uss), "pss": statistics.median(pss), "uss_all": statistics.median(uss) * users,
                "helpers_pss": sum(helpers), "process": environment.get("process", {})}


def _released(steps: Path) -> bool:
    try:
        return any(s.get("release_clock") is not None for s in json.loads(steps.read_text()))
    except (OSError, ValueError):
        return False


def sweep(start: str, data: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "app", "--results", str(Path(tmp) / "r.duckdb"), "run", "--target",
                        "duckdb", "--data-dir", str(data), "--workload", "noop", "--users", "1,2,4,8,16,32,64,128",
                        "--duration", "5", "--param", "hold_s=0.01", "--probes", "0", "--start", start, "--force"],
                       cwd=ROOT, check=True, capture_output=True)
        return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="8,32,128")
    parser.add_argument("--workloads", default="noop,read-day")
    parser.add_argument("--rows", type=int, default=200_000, help="rows of read-day's day")
    parser.add_argument("--no-sweep", action="store_true", help="leave out the timed 1..128 sweep")
    args = parser.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="tickbench-bench-users-"))
    counts = [int(u) for u in args.users.split(",")]
    print(f"{'workload':9} {'users':>5} {'start':>10} {'ready s':>8} {'step start s':>12} {'USS/user MiB':>13} "
          f"{'PSS/user MiB':>13} {'USS all MiB*':>12} {'server+tracker PSS':>19}")
    results: dict[tuple[str, int, str], dict] = {}
    for workload in args.workloads.split(","):
        for users in counts:
            for start in ("forkserver", "spawn"):
                r = cell(workload, users, start, args.rows, data)
                results[(workload, users, start)] = r
                print(f"{workload:9} {users:5} {start:>10} {r['ready_s']:8.2f} {r['start_s']:12.2f} {r['uss']:13.1f} "
                      f"{r['pss']:13.1f} {r['uss_all']:12.0f} {r['helpers_pss']:19.0f}", flush=True)
    if not args.no_sweep:
        for start in ("forkserver", "spawn"):
            print(f"sweep 1..128 users, 5 s no-op steps, {start}: {sweep(start, data):.1f} s wall", flush=True)
    top = max(counts)
    forked, spawned = results.get(("noop", top, "forkserver")), results.get(("noop", top, "spawn"))
    if forked and spawned:
        print(f"{top} users ready in {forked['ready_s']:.1f} s, USS {forked['uss']:.1f} MiB per user "
              f"(spawn: {spawned['ready_s']:.1f} s, {spawned['uss']:.1f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
