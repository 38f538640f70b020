"""A run's strings reach the terminal as text (issue 55): a name, target, dataset, host or message
holding Rich markup or a terminal's escape sequences (a colour, an OSC-8 link) is printed as it is
stored, its control characters as visible escapes, whatever command prints it."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.text import printable

HOSTILE = ("duckdb[/] [red]a1 [link=file:/etc/passwd]x[/link] \x1b]8;;file:/etc\x1b\\y\x1b]8;;\x1b\\ "
           "\x1b[31mred \u202eevil")


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("hostile")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKBENCH_HOME", str(home))
        store = ResultsStore(home / "results")
        result = Runner(Scenario(name="n " + HOSTILE, workload="noop", users=(1,), operations=5), store).run()
        store.close()
    run_file = next((home / "results" / "runs").glob("*/run.json"))
    run = json.loads(run_file.read_text())
    for field in ("target", "dataset", "message", "host"):       # as a run from another machine may say
        run[field] = f"{field[0]} {HOSTILE}"
    run_file.write_text(json.dumps(run))
    (home / "results" / "catalog.json").unlink(missing_ok=True)
    return home, result.run_id


def _tickbench(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, timeout=120,
                          env={**os.environ, "TICKBENCH_HOME": str(home), "COLUMNS": "400"})


@pytest.mark.parametrize("command", [("runs",), ("show", "RUN")])
def test_runs_and_show_print_a_hostile_runs_strings_as_text(hostile_home, command):
    home, run_id = hostile_home
    done = _tickbench(home, *(run_id if part == "RUN" else part for part in command))
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert b"\x1b" not in done.stdout and "\u202e" not in out          # nothing a terminal would obey
    assert "duckdb[/] [red]a1 [link=file:/etc/passwd]x[/link]" in out     # markup shown, not interpreted
    assert "\\x1b[31mred" in out and "\\u202eevil" in out                # the escapes visible


def test_printable_escapes_control_and_bidi_characters_and_keeps_the_rest():
    assert printable("a\x1b[31mb\tc\nd\u202ee\x07é日") == "a\\x1b[31mb\tc\nd\\u202ee\\x07é日"


def test_the_consoles_net_escapes_a_control_character_printed_any_way():
    from rich.text import Text

    from app.cli.common import PlainConsole
    written = io.StringIO()
    PlainConsole(file=written, force_terminal=True, width=80).print(Text("x\x1b]8;;file:/etc\x1b\\y"), style="bold")
    assert "]8;;file" in written.getvalue() and "\x1b]8;;" not in written.getvalue()
    assert "\\x1b]8;;file:/etc" in written.getvalue()


def test_a_runs_csv_export_holds_no_formula_a_spreadsheet_would_run(hostile_home, tmp_path):
    """A run from elsewhere named ``=HYPERLINK(...)`` or ``@SUM(...)``: its exported CSV cells start
    with an apostrophe (shown as text); its numbers, negative ones too, stay numbers."""
    import csv

    from workloads.results.exports import export_run
    from workloads.text import spreadsheet_safe
    home, run_id = hostile_home
    run_file = next((home / "results" / "runs").glob("*/run.json"))
    run = json.loads(run_file.read_text())
    run["name"], run["message"] = '=HYPERLINK("http://127.0.0.1:1/x","click")', "@SUM(1+1)"
    run_file.write_text(json.dumps(run))
    (home / "results" / "catalog.json").unlink(missing_ok=True)
    store = ResultsStore(home / "results")
    try:
        written = {path.stem.rsplit("_", 1)[1]: path for path in export_run(store, run_id, tmp_path)}
    finally:
        store.close()
    row = next(csv.DictReader(written["run"].open()))
    assert row["name"] == "'" + run["name"] and row["message"] == "'@SUM(1+1)"
    ops = list(csv.DictReader(written["ops"].open()))
    assert any(float(op["t_start"]) < 0 for op in ops)            # warm-ups start before the release
    assert all(not op["t_start"].startswith("'") for op in ops)
    assert spreadsheet_safe(-3.5) == -3.5 and spreadsheet_safe("+1") == "'+1" and spreadsheet_safe("a=b") == "a=b"
