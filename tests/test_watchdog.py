"""The suite's own watchdog (tests/conftest.py): a test stuck where pytest-timeout cannot reach it ends
its process with every thread's stack, instead of hanging the run to CI's limit."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_stuck_test_ends_its_process_with_the_stacks(tmp_path):
    stuck = ROOT / "tests" / f"test_stuck_{os.getpid()}.py"
    stuck.write_text("import time\n\n\ndef test_stuck_forever():\n    time.sleep(600)\n")
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:timeout", "-p", "no:randomly",
                               "-p", "no:cacheprovider", str(stuck)], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, env={**os.environ, "TICKBENCH_TEST_HARD_LIMIT_S": "3"})
        took = time.monotonic() - started
    finally:
        stuck.unlink()
    assert done.returncode != 0 and took < 60
    assert "Timeout" in done.stderr and "test_stuck_forever" in done.stderr, done.stderr
