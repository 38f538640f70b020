"""Put each deliberate bug of ``tests/MUTATIONS.md`` into a copy of the project, one at a time, and
run only the tests named beside it: a bug its tests let pass is a claim nothing checks.

    .venv/bin/python scripts/mutate.py [--only TEXT] [--timeout 900] [--list]

Each row of the table gives the file, the exact text to change and what to change it into (each in
a code span, ``old`` → ``new``; the old text must occur exactly once), and the tests. A bug is
caught when those tests fail (or time out: a hang is a failure too); missed when they pass; stale
when its old text is no longer in the file (the row needs updating). Prints one line per bug and
last ``N caught, M missed`` (stale rows count as missed). Not part of the test suite: it runs the
named tests once per bug; the whole table takes well over an hour on a 2-core machine (docs/development.md).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "MUTATIONS.md"
_CHANGE = re.compile(r"^`(?P<old>.+?)`\s*→\s*`(?P<new>.*?)`$")
_SPAN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Bug:
    claim: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


def read_bugs(table: Path = TABLE) -> list[Bug]:
    """The table's rows: | Claim | File | Change | Tests | (``old`` → ``new``; tests as code spans)."""
    bugs = []
    for line in table.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Claim", "") or set(cells[0]) <= {"-"}:
            continue
        claim, file, change, tests = cells
        match = _CHANGE.match(change.replace("\\|", "|"))
        if not match:
            raise SystemExit(f"{table.name}: cannot read the change of {claim[:60]!r}: {change[:80]!r}")
        bugs.append(Bug(claim, file.strip("`"), match["old"], match["new"],
                        tuple(t.replace("\\|", "|") for t in _SPAN.findall(tests))))
    return bugs


def project_copy() -> Path:
    """The project's files (tracked and new, not ignored) in a temporary folder."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.splitlines()
    copy = Path(tempfile.mkdtemp(prefix="tickbench-mutate-"))
    for name in listed:
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    return copy


def run_bug(copy: Path, bug: Bug, timeout: float) -> tuple[str, float]:
    """"caught", "missed" or "stale: ..." and the seconds it took; the file is restored after."""
    path = copy / bug.file
    original = path.read_text()
    if original.count(bug.old) != 1:
        return f"stale: the old text occurs {original.count(bug.old)} times in {bug.file}", 0.0
    path.write_text(original.replace(bug.old, bug.new))
    started = time.monotonic()
    try:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONDONTWRITEBYTECODE": "1"}
        returncode, output = run_group([sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p",
                                        "no:cacheprovider", *bug.tests], copy, env, timeout)
        if returncode in (4, 5):        # usage error, nothing collected: the row names no test
            return f"stale: pytest exit {returncode}: {output.strip().splitlines()[-1:]}", time.monotonic() - started
        return ("caught" if returncode else "missed"), time.monotonic() - started
    except subprocess.TimeoutExpired:
        return "caught (timed out: the bug hangs its tests)", time.monotonic() - started
    finally:
        path.write_text(original)


def run_group(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """Run ``argv`` in a process group of its own and kill the whole group when it ends, times out
    or this script is stopped: a bug's tests start forkservers, users and servers, and none of them
    may go on (holding a core) into the next bug's tests or after the table."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
        return proc.returncode, output
    finally:
        with suppress(ProcessLookupError):      # the whole group has already gone
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def main() -> int:
    # stopped by SIGTERM (``timeout``, a CI's cancel): unwind, so the running bug's group is killed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only bugs whose claim or file contains this text")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per bug's tests")
    parser.add_argument("--list", action="store_true", help="list the bugs and stop")
    parser.add_argument("--table", type=Path, default=TABLE, help="the table to read (default: tests/MUTATIONS.md)")
    args = parser.parse_args()
    bugs = [b for b in read_bugs(args.table) if args.only.lower() in (b.claim + b.file).lower()]
    if args.list:
        for bug in bugs:
            print(f"{bug.file}: `{bug.old}` -> `{bug.new}`  [{', '.join(bug.tests)}]")
        return 0
    copy = project_copy()
    caught = 0
    try:
        for bug in bugs:
            verdict, seconds = run_bug(copy, bug, args.timeout)
            caught += verdict.startswith("caught")
            print(f"{verdict:>8}  {seconds:6.1f} s  {bug.file}: {bug.claim}", flush=True)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    print(f"{caught} caught, {len(bugs) - caught} missed")
    return 0 if caught == len(bugs) else 1


if __name__ == "__main__":
    sys.exit(main())
