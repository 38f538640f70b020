"""The double-clickable app: build it with PyInstaller from these sources, then prove it works.

One build per session, into a temporary dist/work folder (never the checkout's dist/), so the test
always checks the current sources. Build + smoke test take ~1.5-2 min on 2 busy cores.
Deselect with ``-m "not frozen"``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workloads.queries.verify import suites_of

TAQ_QUERIES = sum(len(s.queries) for s in suites_of("taq"))  # every TAQ suite's, the tick pack's too

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.frozen,
    pytest.mark.timeout(900),
    pytest.mark.skipif(sys.platform != "linux", reason="the build and smoke scripts are for Linux"),
    pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="build.sh needs the venv it builds from"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="build.sh needs bash"),
]


@pytest.fixture(scope="module")
def frozen_app(tmp_path_factory) -> Path:
    pytest.importorskip("PyInstaller", reason="the 'build' extra (pyinstaller) is not installed")
    out = tmp_path_factory.mktemp("frozen")
    env = {**os.environ, "TICKBENCH_VENV": sys.prefix, "TICKBENCH_DIST": str(out / "dist"),
           "TICKBENCH_WORK": str(out / "work")}
    started = time.perf_counter()
    done = subprocess.run(["bash", str(PACKAGING / "build.sh")], env=env, cwd=ROOT, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert done.returncode == 0, f"build failed:\n{done.stdout[-4000:]}"
    print(f"build: {time.perf_counter() - started:.0f} s")
    app = out / "dist" / "tickbench" / "tickbench"
    assert app.is_file() and os.access(app, os.X_OK), done.stdout[-2000:]
    shutil.rmtree(out / "work", ignore_errors=True)   # ~100 MB of PyInstaller intermediates
    return app


def test_frozen_app_passes_its_self_test_with_workers_spawned_from_the_binary(frozen_app):
    done = subprocess.run([sys.executable, str(PACKAGING / "smoke_test.py"), "--app", str(frozen_app)],
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    print(done.stdout)
    assert done.returncode == 0, done.stdout
    assert "SMOKE TEST OK" in done.stdout
    assert "spawned from the frozen binary" in done.stdout


def test_frozen_app_answers_a_headless_subcommand(frozen_app, tmp_path):
    # The command line lives in the same executable: `tickbench workloads` must work without Qt.
    env = {**os.environ, "TICKBENCH_HOME": str(tmp_path)}
    env.pop("QT_QPA_PLATFORM", None)
    done = subprocess.run([str(frozen_app), "workloads"], env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "read-day" in done.stdout and "suite=taq001" in done.stdout
    # the query suites (resources/queries) and their pandas versions are in the binary
    done = subprocess.run([str(frozen_app), "verify", "--targets", "duckdb,parquet,hdf5", "--days", "1",
                           "--rows-per-day", "3000", "--symbols", "10"], env=env, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Every target answered every query alike ({TAQ_QUERIES} queries)" in done.stdout


def test_frozen_app_runs_a_scenario_the_way_the_window_starts_it(frozen_app, tmp_path):
    """The window starts each run as this very binary: scenario on stdin, live snapshots in its folder."""
    import json

    from app.window.run_process import RUN_NICE
    from workloads.run.live import read_live
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    env = {**os.environ, "TICKBENCH_HOME": str(tmp_path)}
    scenario = Scenario(name="frozen live", workload="noop", users=(2,), operations=25)
    done = subprocess.run([str(frozen_app), "--results", str(tmp_path / "results"), "run", "--scenario-stdin",
                           "--run-id", "frozen-live", "--live", "--nice", str(RUN_NICE)],
                          input=json.dumps(scenario.to_dict()), env=env, text=True, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    store = ResultsStore(tmp_path / "results")
    run = store.run("frozen-live")
    assert run["status"] == "completed" and run["name"] == "frozen live" and run["environment"]["nice"] == RUN_NICE
    assert len(store.ops("frozen-live", kinds=("measured",))) == 50
    live = read_live(tmp_path / "results" / "runs" / "frozen-live")
    assert live.status == "completed" and live.ops_done == 50


def test_frozen_app_runs_a_32_user_step_forked_from_its_preloaded_server(frozen_app, tmp_path):
    """The binary's users come from a forkserver that is the binary too (PyInstaller's multiprocessing
    support), with the engine's modules preloaded there."""
    from workloads.results.store import ResultsStore

    env = {**os.environ, "TICKBENCH_HOME": str(tmp_path)}
    done = subprocess.run([str(frozen_app), "--results", str(tmp_path / "results"), "run", "--target", "duckdb",
                           "--workload", "noop", "--users", "32", "--operations", "20", "--probes", "0",
                           "--run-id", "frozen-32"], env=env, text=True, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    store = ResultsStore(tmp_path / "results")
    run = store.run("frozen-32")
    process = run["environment"]["process"]
    assert run["status"] == "completed" and process["start"] == "forkserver", (run["message"], process)
    assert {"duckdb", "pandas", "pyarrow", "workloads.run.worker"} <= set(process["preloaded"]), process
    assert len(store.ops("frozen-32", kinds=("measured",))) == 32 * 20
    assert store.workers("frozen-32")["pid"].nunique() == 32


def test_frozen_app_says_which_engines_it_bundles(frozen_app, tmp_path):
    env = {**os.environ, "TICKBENCH_HOME": str(tmp_path), "COLUMNS": "200"}
    done = subprocess.run([str(frozen_app), "targets"], env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.count("│") >= 4}
    for bundled in ("duckdb", "parquet", "hdf5"):
        assert "ready" in rows[bundled], done.stdout
    for left_out, extra in (("clickhouse", "clickhouse"), ("arcticdb", "arcticdb")):
        assert "not in this build" in rows[left_out] and f"tickbench[{extra}]" in rows[left_out], done.stdout


def test_frozen_app_packs_under_150_mb(frozen_app, tmp_path):
    import tarfile
    archive = tmp_path / "tickbench.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:      # gzip's own default, as `tar czf`
        tar.add(frozen_app.parent, arcname="tickbench")
    size_mb = archive.stat().st_size / 1e6
    print(f"tar.gz: {size_mb:.1f} MB")
    assert size_mb < 150, f"the double-click app packs to {size_mb:.1f} MB"


def test_desktop_entry_installs_with_the_real_paths_and_uninstalls(frozen_app, tmp_path):
    data_home = tmp_path / "xdg-data"
    env = {**os.environ, "XDG_DATA_HOME": str(data_home)}
    script = frozen_app.parent / "install-desktop-entry.sh"   # shipped inside the dist folder
    done = subprocess.run(["bash", str(script)], env=env, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr

    entry = data_home / "applications" / "tickbench.desktop"
    fields = dict(line.split("=", 1) for line in entry.read_text().splitlines() if "=" in line)
    assert fields["Exec"] == f'"{frozen_app}"'
    assert fields["TryExec"] == str(frozen_app)
    icon = Path(fields["Icon"])
    assert icon.is_file() and icon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fields["Categories"] == "Development;Office;"
    assert "@" not in entry.read_text(), "a template placeholder was left in the entry"

    done = subprocess.run(["bash", str(script), "--uninstall"], env=env, text=True, capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert not entry.exists() and not icon.exists()


def test_desktop_entry_installer_refuses_a_missing_app(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg-data")}
    done = subprocess.run(["bash", str(PACKAGING / "install-desktop-entry.sh"), str(tmp_path / "nope" / "tickbench")],
                          env=env, text=True, capture_output=True, timeout=60)
    assert done.returncode == 1
    assert "no executable at" in done.stderr and "nope" in done.stderr
    assert not (tmp_path / "xdg-data" / "applications" / "tickbench.desktop").exists()
