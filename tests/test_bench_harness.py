"""benchmarks/bench_harness.py prints its own figures where Locust, its optional comparison, is not
installed (issue 41: it failed outright), and says Locust was not measured."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("locust") is not None,
                    reason="Locust is installed here: the benchmark measures it (the missing case is what is tested)")
def test_the_harness_benchmark_prints_its_figures_without_locust():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_harness.py"), "--seconds", "0.5",
                           "--repeats", "1", "--records", "20000"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("harness ") and " us/op, ingest " in last and last.endswith("locust not measured"), last
    assert "Locust is not installed" in done.stdout
