"""Smoke-test the frozen app: run ``tickbench --self-test`` offscreen and check what it proves.

    .venv/bin/python packaging/smoke_test.py [--app dist/tickbench/tickbench] [--runs 3] [--build]

Fails (exit 1, one line saying why) on: a missing module in the output, no "tickbench ready" line,
no "self-test OK", a non-zero exit, a timeout, or a stored run that is not what the self-test
claims (status, two worker pids that are not the app's own, operations recorded). It also watches
the app's child processes while it runs, to prove the workers were spawned from the frozen binary.
Then it opens the real window the way a double-click does (``--quit-after 1``) and fails if that
does not print its ready line and exit 0.
Prints: build time (with --build), launch-to-ready times of each run, the folder's size.
Run it with the build venv's Python (it reads the results catalog with Tickbench's own store and watches processes
with psutil).
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workloads.results.store import ResultsStore  # noqa: E402  (the checkout the app was built from)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_APP = ROOT / "dist" / "tickbench" / "tickbench"
MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|No module named|ImportError)[^\n]*")
READY = re.compile(r"^tickbench ready in ([0-9.]+) s")
WORKERS = re.compile(r"^self-test run (\S+): (\w+); workers \[([0-9, ]*)\]; (\d+) operations stored")


class SmokeFailure(Exception):
    pass


@dataclass
class SelfTestRun:
    output: list[tuple[float, str]] = field(default_factory=list)   # (seconds since launch, line)
    children: dict[int, tuple[str, list[str]]] = field(default_factory=dict)  # pid -> (exe, cmdline)
    app_pid: int = 0
    exit_code: int | None = None
    elapsed_s: float = 0.0

    def text(self) -> str:
        return "\n".join(line for _, line in self.output)


def run_self_test(app: Path, results: Path, home: Path, timeout_s: float) -> SelfTestRun:
    """Launch the app with --self-test; collect its output with timestamps and its children."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TICKBENCH_HOME": str(home)}
    run = SelfTestRun()
    started = time.perf_counter()
    proc = subprocess.Popen([str(app), "--self-test", "--results", str(results)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                            start_new_session=True)   # its own process group: a timeout kills all of it
    run.app_pid = proc.pid

    def read() -> None:
        for line in proc.stdout:
            run.output.append((time.perf_counter() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    parent = psutil.Process(proc.pid)
    while proc.poll() is None:
        _note_children(parent, run.children)
        if time.perf_counter() - started > timeout_s:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            reader.join(5)
            last = " | ".join(line for _, line in run.output[-3:]) or "(none)"
            raise SmokeFailure(f"no exit after {timeout_s:g} s (killed); last output: {last}")
        time.sleep(0.02)
    reader.join(10)
    run.exit_code = proc.returncode
    run.elapsed_s = time.perf_counter() - started
    return run


def open_window(app: Path, home: Path, timeout_s: float) -> float:
    """The double-click path: start the real window (offscreen) and let it close itself after 1 s.

    Returns seconds from launch to its "tickbench ready" line, which the app prints after the first
    event-loop turn, when the window is usable.
    """
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TICKBENCH_HOME": str(home),
           "XDG_CONFIG_HOME": str(home / "config")}           # QSettings: never the user's own
    started = time.perf_counter()
    proc = subprocess.Popen([str(app), "--quit-after", "1"], env=env, text=True, bufsize=1,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    timer = threading.Timer(timeout_s, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    lines, ready_s = [], None
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if ready_s is None and READY.match(line):
                ready_s = time.perf_counter() - started
        proc.wait()
    finally:
        timer.cancel()
    text = "\n".join(lines)
    missing = MISSING_MODULE.search(text)
    if missing:
        raise SmokeFailure(f"missing module when opening the window: {missing.group(0).strip()}")
    if ready_s is None or proc.returncode != 0:
        raise SmokeFailure(f"opening the window: {'no ready line; ' if ready_s is None else ''}"
                           f"{_exit_description(proc.returncode)} (timeout {timeout_s:g} s); "
                           f"output:\n{text[-2000:]}")
    return ready_s


def _note_children(parent: psutil.Process, seen: dict[int, tuple[str, list[str]]]) -> None:
    try:
        children = parent.children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        if child.pid in seen:
            continue
        try:
            seen[child.pid] = (child.exe(), child.cmdline())
        except psutil.Error:
            pass   # gone already, or not yet exec()ed; the next poll sees it again if it lives on


def check(run: SelfTestRun, app: Path, results: Path) -> dict:
    """Every claim of the self-test, verified; returns the figures of this run."""
    text = run.text()
    missing = MISSING_MODULE.search(text)
    if missing:
        raise SmokeFailure(f"missing module in the frozen app: {missing.group(0).strip()}")
    ready = next(((t, READY.match(line)) for t, line in run.output if READY.match(line)), None)
    if ready is None:
        raise SmokeFailure(f"no 'tickbench ready' line (exit code {run.exit_code}); output:\n{text[-2000:]}")
    if "self-test OK" not in text:
        failed = next((line for _, line in run.output if line.startswith("self-test FAILED")), None)
        raise SmokeFailure(failed or f"no 'self-test OK' line; output:\n{text[-2000:]}")
    if run.exit_code != 0:
        raise SmokeFailure(f"self-test printed OK but then {_exit_description(run.exit_code)}")

    claim = next((WORKERS.match(line) for _, line in run.output if WORKERS.match(line)), None)
    if claim is None:
        raise SmokeFailure("no 'self-test run ...: workers [...]' line to check the workers against")
    run_id, status, pid_text, ops_claimed = claim.group(1), claim.group(2), claim.group(3), int(claim.group(4))
    pids = [int(p) for p in pid_text.replace(" ", "").split(",") if p]
    if len(pids) != 2 or len(set(pids)) != 2 or run.app_pid in pids:
        raise SmokeFailure(f"expected 2 distinct worker pids other than the app's ({run.app_pid}), got {pids}")

    # The workers must be processes the frozen binary spawned from itself.
    app_exe = os.path.realpath(app)
    for pid in pids:
        if pid not in run.children:
            raise SmokeFailure(f"worker pid {pid} was never seen as a child of the app (pid {run.app_pid}); "
                               f"children seen: {sorted(run.children)}")
        exe, cmdline = run.children[pid]
        if os.path.realpath(exe) != app_exe:
            raise SmokeFailure(f"worker {pid} ran {exe} {cmdline[:3]}, not the frozen binary {app_exe}")

    # And the stored run must say the same.
    if not results.exists():
        raise SmokeFailure(f"the self-test claimed a stored run but {results} does not exist")
    store = ResultsStore(results)          # the results catalog, read as any other process reads it
    try:
        found = store.query("SELECT status, environment FROM runs WHERE run_id = ?", [run_id])
        if not found:
            raise SmokeFailure(f"run {run_id} is not in {results}")
        stored = found[0]
        stored_pids = sorted(p for (p,) in store.query(
            "SELECT pid FROM workers WHERE run_id = ? AND pid IS NOT NULL", [run_id]))
        ops, ok_ops, workers_with_ops = store.query(
            "SELECT count(*), count(*) FILTER (WHERE ok), count(DISTINCT worker) FROM ops WHERE run_id = ?",
            [run_id])[0]
    finally:
        store.close()
    if stored[0] != "completed" or status != "completed":
        raise SmokeFailure(f"run {run_id} is {stored[0]!r} in the results file (printed {status!r})")
    if stored_pids != sorted(pids):
        raise SmokeFailure(f"stored worker pids {stored_pids} differ from the printed ones {sorted(pids)}")
    if ops != ops_claimed or ok_ops < 4 or workers_with_ops != 2:
        raise SmokeFailure(f"stored operations: {ops} ({ok_ops} ok, from {workers_with_ops} workers); "
                           f"the self-test printed {ops_claimed}; expected >= 4 ok from 2 workers")
    if '"not installed"' in str(stored[1]):
        raise SmokeFailure(f"the run's environment lists a library as not installed: {stored[1]}")
    return {"ready_wall_s": ready[0], "ready_app_s": float(ready[1].group(1)), "total_s": run.elapsed_s,
            "workers": pids, "app_pid": run.app_pid, "ops": ops}


def _exit_description(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"died of {signal.Signals(-code).name} (exit code {code})"
        except ValueError:
            return f"died of signal {-code}"
    return f"exited with code {code}"


def folder_size(path: Path) -> int:
    """Bytes on disk, as ``du`` counts them."""
    return sum(p.lstat().st_blocks * 512 for p in path.rglob("*")) + path.lstat().st_blocks * 512


def build(dist: Path, work: Path) -> float:
    env = {**os.environ, "TICKBENCH_DIST": str(dist), "TICKBENCH_WORK": str(work)}
    if sys.prefix != sys.base_prefix:
        env.setdefault("TICKBENCH_VENV", sys.prefix)   # build with the venv running this script
    started = time.perf_counter()
    done = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SmokeFailure(f"build failed (exit {done.returncode}):\n{done.stdout[-3000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Smoke-test the frozen Tickbench build.")
    parser.add_argument("--app", type=Path, help=f"the frozen executable (default {DEFAULT_APP})")
    parser.add_argument("--runs", type=int, default=1, help="self-test runs (launch time is reported per run)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds allowed per self-test run")
    parser.add_argument("--build", action="store_true", help="build first (packaging/build.sh) and time it")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="with --build: PyInstaller's dist folder")
    parser.add_argument("--work", type=Path, default=ROOT / "build", help="with --build: PyInstaller's work folder")
    args = parser.parse_args(argv)

    try:
        build_s = None
        if args.build:
            print(f"building into {args.dist} ...", flush=True)
            build_s = build(args.dist, args.work)
            print(f"build time: {build_s:.0f} s", flush=True)
        app = (args.app or (args.dist / "tickbench" / "tickbench" if args.build else DEFAULT_APP)).resolve()
        if not app.is_file() or not os.access(app, os.X_OK):
            raise SmokeFailure(f"no frozen executable at {app}: run packaging/build.sh first")
        figures = []
        for index in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="tickbench-smoke-") as tmp:
                results = Path(tmp) / "selftest"
                run = run_self_test(app, results, Path(tmp) / "home", args.timeout)
                figures.append(check(run, app, results))
                figures[-1]["window_ready_s"] = open_window(app, Path(tmp) / "window-home", args.timeout)
            f = figures[-1]
            print(f"run {index + 1}: self-test ready {f['ready_wall_s']:.2f} s after launch (app's own clock "
                  f"{f['ready_app_s']:.2f} s), done in {f['total_s']:.1f} s, app pid {f['app_pid']}, "
                  f"workers {f['workers']} spawned from the frozen binary, {f['ops']} operations stored; "
                  f"window (--quit-after 1) ready {f['window_ready_s']:.2f} s after launch", flush=True)
    except SmokeFailure as exc:
        print(f"SMOKE TEST FAILED: {exc}", flush=True)
        return 1

    for key, what in (("window_ready_s", "window"), ("ready_wall_s", "self-test window")):
        ready = [f[key] for f in figures]
        print(f"launch to ready, {what} (offscreen): median {statistics.median(ready):.2f} s, "
              f"min {min(ready):.2f} s, max {max(ready):.2f} s over {len(ready)} run(s)")
    if build_s is not None:
        print(f"build time: {build_s:.0f} s")
    print(f"size: {folder_size(app.parent) / 2**20:.0f} MiB ({app.parent})")
    print("SMOKE TEST OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
