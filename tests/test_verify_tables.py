"""``tickbench verify`` on a table where it lives: the user's suite answered by the table's own SQL and by
pandas over the table's rows (the days read, DuckDB over the frames), compared query by query."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

from tests.test_user_suites import docs_suite
from tests.trades_file import trades_table
from workloads.queries.user_suites import FRAMES_NOTE

ROOT = Path(__file__).resolve().parent.parent


def _tickbench(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)


def test_verify_checks_a_tables_own_sql_against_pandas_over_its_rows(tmp_path):
    path = tmp_path / "mine.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("t", trades_table(rows=6_000, days=3, symbols=20))
        con.execute("CREATE TABLE trades AS SELECT * FROM t")
    home = tmp_path / "home"
    added = _tickbench(home, "targets", "add-table", "mine", "--kind", "duckdb", "--location", str(path),
                       "--table", "trades", "--time", "ts", "--key", "sym", "--price", "price", "--size", "qty")
    assert added.returncode == 0, added.stdout + added.stderr
    done = _tickbench(home, "verify", "--dataset", "tbl_mine", "--suite", str(docs_suite(tmp_path)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "table:mine" in done.stdout and "pandas over table:mine" in done.stdout
    rows = [line for line in done.stdout.splitlines() if "trades-suite" in line]
    assert len(rows) == 5 and all(line.count("same") == 2 for line in rows), done.stdout
    # the second opinion read the rows and answered as pandas does, not by the table's own SQL again
    assert f"pandas over table:mine: {FRAMES_NOTE}." in " ".join(done.stdout.split()), done.stdout
