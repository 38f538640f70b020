"""Any tick file as a dataset: a user's trades CSV, Parquet and Feather folders, each imported in its own
schema with its roles, and every kind of bad input named in one line with nothing kept."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.trades_file import trades_table, write_trades_csv, write_trades_parquet_days
from workloads.datasets import get_dataset
from workloads.datasets.imported import imports_dir
from workloads.datasets.roles import RoleError, Roles
from workloads.datasets.schema import Scale
from workloads.datasets.tick_import import ImportCancelled, ImportSourceError, import_source, preview_source

ROOT = Path(__file__).resolve().parent.parent
ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")
ALL = Scale(days=10)


@pytest.fixture(scope="module")
def trades() -> pa.Table:
    return trades_table(rows=30_000, days=3, symbols=20)


@pytest.fixture
def trades_csv(tmp_path, trades) -> Path:
    return write_trades_csv(tmp_path / "trades.csv", trades)


def _stored(name: str) -> pd.DataFrame:
    dataset = get_dataset(f"imp_{name}")
    return pd.concat([dataset.day_frame(i, ALL) for i in range(len(dataset.all_days))], ignore_index=True)


def _expected(trades: pa.Table) -> pd.DataFrame:
    """What the import must hold: UTC instants without a zone, stably sorted by time within each day."""
    frame = trades.to_pandas()
    frame["ts"] = frame["ts"].dt.tz_convert("UTC").dt.tz_localize(None)
    return frame.sort_values("ts", kind="stable").reset_index(drop=True)


def _nothing_kept() -> bool:
    return not imports_dir().is_dir() or not any(imports_dir().iterdir())


# --- importing -----------------------------------------------------------------------------------------
def test_a_trades_csv_with_a_zone_keeps_nanoseconds_as_utc_instants(trades_csv, trades):
    preview = preview_source(trades_csv)
    assert preview.format == "csv" and preview.delimiter == ","
    assert [(c.name, c.ddb_type) for c in preview.schema.columns] == [
        ("ts", "NANOTIMESTAMP"), ("sym", "SYMBOL"), ("price", "DOUBLE"), ("qty", "LONG"),
        ("side", "SYMBOL"), ("venue", "SYMBOL")]
    assert preview.zone == "UTC offset -05:00"
    assert preview.suggested == ROLES
    dataset = import_source(trades_csv, "trades", ROLES)
    assert dataset.info.name == "imp_trades" and dataset.rows == 30_000
    assert [str(d) for d in dataset.all_days] == ["2024-03-04", "2024-03-05", "2024-03-06"]
    assert dataset.info.time_column == dataset.info.date_column == "ts"
    assert dataset.info.key_column == "sym" and dataset.info.size_column == "qty"
    assert dataset.info.price_columns == ("price", "price")
    assert "-05:00" in dataset.manifest["zone"]
    stored = _stored("trades")
    expected = _expected(trades)
    assert (stored["ts"].to_numpy() == expected["ts"].to_numpy()).all()     # every nanosecond, as UTC
    assert stored["ts"].dt.nanosecond.any()
    pd.testing.assert_frame_equal(stored.drop(columns="ts"), expected.drop(columns="ts"), check_dtype=False)
    counts = expected["sym"].value_counts()
    assert dataset.all_keys[0] == counts.index[0] and len(dataset.all_keys) == 20


def test_a_hive_parquet_folder_and_a_feather_folder_import_alike(tmp_path, trades):
    hive = write_trades_parquet_days(tmp_path / "lake", trades, hive=True)
    flat = write_trades_parquet_days(tmp_path / "feathers", trades, hive=False, fmt="feather")
    preview = preview_source(hive)
    assert preview.format == "parquet" and preview.hive and len(preview.files) == 3
    assert "UTC" in preview.zone
    a = import_source(hive, "lake", ROLES)
    b = import_source(flat, "feathers", ROLES)
    assert a.rows == b.rows == 30_000
    lake, feathers = _stored("lake"), _stored("feathers")
    pd.testing.assert_frame_equal(lake[feathers.columns], feathers)
    assert "date" in lake.columns                    # the hive folders' column is the user's too


def test_a_semicolon_csv_with_a_date_and_a_time_of_day(tmp_path):
    path = tmp_path / "quotes.txt"
    path.write_text("day;tod;code;bid;ask\n2024-01-02;09:30:00;A;1.5;1.6\n2024-01-02;09:30:01;B;2.5;2.6\n"
                    "2024-01-03;09:30:00;A;1.7;1.8\n")
    preview = preview_source(path)
    assert preview.delimiter == ";"
    assert preview.suggested == Roles(time="day", time_of_day="tod", key="code", price=("bid", "ask"))
    dataset = import_source(path, "quotes", preview.suggested)
    assert dataset.info.date_column == "day" and dataset.info.time_column == "tod"
    assert dataset.info.price_columns == ("bid", "ask")
    assert [d.day for d in dataset.all_days] == [2, 3]
    first = dataset.day_frame(0, ALL)
    assert list(first["tod"].dt.second) == [0, 1] and (first["tod"].dt.date.astype(str) == "1970-01-01").all()


def test_types_the_user_chooses_and_a_zone_for_naive_times(tmp_path):
    path = tmp_path / "naive.csv"
    path.write_text("when,sym,qty\n2024-03-04 09:30:00.123456789,A,1\n2024-03-04 15:59:59.999999999,B,2\n")
    dataset = import_source(path, "naive", Roles(time="when", key="sym"),
                            types={"when": "TIMESTAMP", "qty": "DOUBLE"}, zone="America/New_York")
    frame = dataset.day_frame(0, ALL)
    assert frame["qty"].dtype == np.float64
    assert [c.ddb_type for c in dataset.info.schema.columns] == ["TIMESTAMP", "SYMBOL", "DOUBLE"]
    # New York at -05:00 in March before DST; TIMESTAMP keeps milliseconds
    assert str(frame["when"].iloc[0]) == "2024-03-04 14:30:00.123000"
    assert str(frame["when"].iloc[1]) == "2024-03-04 20:59:59.999000"
    assert "America/New_York" in dataset.manifest["zone"]


def test_no_key_is_a_dataset_without_one(tmp_path, trades):
    path = write_trades_csv(tmp_path / "t.csv", trades.slice(0, 500))
    dataset = import_source(path, "nokey", Roles(time="ts"))
    assert dataset.info.key_column == "" and dataset.all_keys == []
    assert "no key column" in dataset.info.notes


# --- bad input: one line naming the file and the problem; nothing kept --------------------------------------
def _csv(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, text, roles, message", [
    ("notime.csv", "sym,qty\nA,1\n", Roles(time="ts"), "notime.csv: no column 'ts' for the time role"),
    ("textime.csv", "ts,sym\nmonday,A\n", Roles(time="ts"),
     "textime.csv: column 'ts' is text ('monday' in its first row), and the time role needs times: read it with "
     "--time-format with its format in strptime's fields"),
    ("dupes.csv", "ts,sym,sym\n2024-01-01T00:00:00,A,B\n", Roles(time="ts"),
     "dupes.csv: two columns are named 'sym' (columns 2 and 3)"),
    ("empty.csv", "", Roles(time="ts"), "empty.csv is empty"),
    ("header.csv", "ts,sym\n", Roles(time="ts"), "header.csv has a header but no data rows"),
    ("wide.csv", "ts,sym\n2024-01-01T00:00:00,A\n2024-01-01T00:00:01,B,C\n", Roles(time="ts"),
     "wide.csv line 3: 3 fields where the header has 2"),
])
def test_bad_files_are_named_in_one_line(tmp_path, name, text, roles, message):
    path = _csv(tmp_path, name, text)
    with pytest.raises((ImportSourceError, RoleError)) as caught:
        import_source(path, "bad", roles)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert _nothing_kept()


def test_a_time_that_does_not_parse_names_its_line(tmp_path):
    path = _csv(tmp_path, "times.csv", "ts,sym\n2024-01-01T00:00:00,A\nyesterday,B\n")
    with pytest.raises(ImportSourceError, match=r"times.csv line 3, column ts: 'yesterday' is not a timestamp"):
        import_source(path, "bad", Roles(time="ts"), types={"ts": "TIMESTAMP"})
    assert _nothing_kept()


def test_mixed_types_past_the_inferred_block_name_line_and_column(tmp_path, monkeypatch):
    from workloads.datasets import tick_sources
    monkeypatch.setattr(tick_sources, "INFER_BYTES", 4096)      # types from the first 4 KiB, as 4 MiB of a big file
    monkeypatch.setattr(tick_sources, "BLOCK_BYTES", 4096)
    rows = [f"2024-01-01T10:00:{i % 60:02d},{i}" for i in range(2000)]
    rows[1500] = "2024-01-01T10:00:00,n/a-ish"
    path = _csv(tmp_path, "mixed.csv", "ts,qty\n" + "\n".join(rows) + "\n")
    with pytest.raises(ImportSourceError) as caught:
        import_source(path, "bad", Roles(time="ts"))
    assert "mixed.csv line 1,502, column qty: 'n/a-ish' is not an integer" in str(caught.value)
    assert _nothing_kept()
    dataset = import_source(path, "mixed", Roles(time="ts"), skip_bad_rows=True)
    assert dataset.rows == 1999
    skipped = dataset.manifest["skipped"]
    assert skipped["count"] == 1 and skipped["rows"] == ["mixed.csv line 1,502, column qty: 'n/a-ish' is not an integer"]


def test_skipping_counts_and_lists_rows_of_the_wrong_width(tmp_path):
    path = _csv(tmp_path, "ragged.csv", "ts,sym\n2024-01-01T00:00:00,A\n2024-01-01T00:00:01,B,C\n2024-01-01T00:00:02,D\n")
    dataset = import_source(path, "ragged", Roles(time="ts", key="sym"), skip_bad_rows=True)
    assert dataset.rows == 2 and dataset.all_keys == ["A", "D"]
    assert dataset.manifest["skipped"]["count"] == 1
    assert "ragged.csv line 3: 3 fields where the header has 2" in dataset.manifest["skipped"]["rows"][0]


def test_a_file_that_is_not_what_its_extension_says(tmp_path, trades):
    fake = _csv(tmp_path, "trades.parquet", "ts,sym\n2024-01-01T00:00:00,A\n")
    with pytest.raises(ImportSourceError, match="trades.parquet is not a Parquet file as its name says: its bytes are text"):
        import_source(fake, "bad", Roles(time="ts"))
    real = tmp_path / "real.csv"
    pq.write_table(trades.slice(0, 10), real)
    with pytest.raises(ImportSourceError, match="real.csv is not a Csv file as its name says: its bytes are a Parquet file"):
        import_source(real, "bad", Roles(time="ts"))
    assert _nothing_kept()


def test_a_folder_of_different_schemas_or_formats_is_refused(tmp_path, trades):
    folder = write_trades_parquet_days(tmp_path / "mixed", trades, hive=False)
    first = sorted(folder.iterdir())[0]
    pq.write_table(trades.slice(0, 10).drop_columns(["venue"]), first)
    with pytest.raises(ImportSourceError, match=r"parquet has columns ts, sym, price, qty, side.* but .*parquet has ts, sym, price, qty, side.*: a folder must hold one schema"):
        import_source(folder, "bad", ROLES)
    other = write_trades_parquet_days(tmp_path / "formats", trades, hive=False)
    write_trades_csv(other / "extra.csv", trades.slice(0, 10))
    with pytest.raises(ImportSourceError, match="the folder mixes formats"):
        import_source(other, "bad", ROLES)
    assert _nothing_kept()


def test_a_cancel_keeps_nothing_and_the_earlier_import_stays(trades_csv):
    import_source(trades_csv, "kept", ROLES)
    before = json.loads((imports_dir() / "kept" / "manifest.json").read_text())
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ImportCancelled):
        import_source(trades_csv, "kept", Roles(time="ts"), cancel=cancel)
    after = json.loads((imports_dir() / "kept" / "manifest.json").read_text())
    assert after["import_id"] == before["import_id"]
    assert sorted(p.name for p in imports_dir().iterdir()) == ["kept"]


def test_progress_says_rows_a_second_and_time_left(tmp_path):
    table = trades_table(rows=400_000, days=1, symbols=5)
    path = write_trades_csv(tmp_path / "big.csv", table)
    messages = []

    def progress(done, total, message):
        messages.append((done, total, message))
        if message.startswith("read ") and sum(m.startswith("read ") for _, _, m in messages) <= 2:
            time.sleep(1.0)      # a slow disk: the import's clock runs on, so seconds are left to say

    import_source(path, "big", ROLES, progress=progress)
    reads = [m for _, _, m in messages if m.startswith("read ")]
    assert len(reads) >= 3, messages
    assert all(re.search(r"\([\d,]+ rows/s, (about [\d,]+ s|under a second) left\)$", m) for m in reads[1:]), reads
    assert re.search(r"rows/s, about [1-9][\d,]* s left", reads[1]), reads
    assert messages[-1][0] == messages[-1][1] == 1000


# --- the command line -------------------------------------------------------------------------------------
def tickbench(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=ROOT)


def test_cli_imports_a_trades_file_and_lists_its_roles(tmp_path, trades_csv):
    home = tmp_path / "home"
    done = tickbench("import", str(trades_csv), "--name", "trades", "--time", "ts", "--key", "sym",
                     "--price", "price", "--size", "qty", home=home)
    assert done.returncode == 0, done.stderr
    assert "Imported 30,000 rows over 3 days (2024-03-04 .. 2024-03-06) from trades.csv" in done.stdout
    assert "time ts · key sym · price price · size qty" in done.stdout
    listing = tickbench("datasets", home=home)
    assert "columns: ts NANOTIMESTAMP, sym SYMBOL, price DOUBLE, qty LONG, side SYMBOL, venue SYMBOL" in listing.stdout
    preview = tickbench("import", str(trades_csv), "--name", "x", "--preview", home=home)
    assert preview.returncode == 0 and "timestamp[ns, tz=UTC]" in preview.stdout
    assert "Suggested roles: --time ts --key sym --price price --size qty" in preview.stdout


def test_cli_import_errors_are_one_line_and_exit_2(tmp_path, trades_csv):
    home = tmp_path / "home"
    cases = [
        (["--time", "when"], "trades.csv: no column 'when' for the time role"),
        (["--time", "ts", "--price", "side"], "column 'side' is SYMBOL, the price role needs a number"),
        (["--time", "ts", "--type", "qty=WHATEVER"], "column qty: unknown type 'WHATEVER'"),
        (["--time", "ts", "--type", "qty=LONG", "--type", "qty=DOUBLE"], "--type names 'qty' twice"),
        (["--time", "ts", "--zone", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
        ([], "name the time column: --time COLUMN (suggested: --time ts --key sym --price price --size qty)"),
    ]
    for extra, message in cases:
        done = tickbench("import", str(trades_csv), "--name", "x", *extra, home=home)
        assert done.returncode == 2, (extra, done.stderr)
        assert message in done.stderr.strip().splitlines()[-1] and "Traceback" not in done.stderr, done.stderr
    assert not (home / "imports").exists() or not any((home / "imports").iterdir())
