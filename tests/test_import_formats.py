"""The formats files really come in: epoch integers as times, a decimal comma, day-first times with a
fraction of a second, the CSV dialect (quote, escape, null markers, encoding), and a quote that never
closes, each read into the same UTC instants and numbers, or refused in one sentence with nothing kept."""
from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.imported import imports_dir
from workloads.datasets.roles import RoleError, Roles
from workloads.datasets.schema import Scale
from workloads.datasets.text_format import TextFormat, TextFormatError
from workloads.datasets.tick_import import ImportSourceError, import_source

ROOT = Path(__file__).resolve().parent.parent
ROLES = Roles(time="exec_time", key="sym", price=("price",), size="qty")
TICKERS = ["BRK.B", "BF B", "BRK/A", "NA", "7203.T"]
START = dt.datetime(2025, 3, 10, 13, 30, tzinfo=dt.timezone.utc)


def _trades(rows: int = 300) -> pd.DataFrame:
    """Trades with nanosecond times, tickers that look like nulls or carry separators, and prices."""
    times = [START + dt.timedelta(seconds=7 * i, microseconds=13 * i) for i in range(rows)]
    ns = [int(t.timestamp()) * 10**9 + t.microsecond * 1000 + (i % 1000) for i, t in enumerate(times)]
    return pd.DataFrame({"exec_time": pd.to_datetime(ns, unit="ns"), "sym": [TICKERS[i % 5] for i in range(rows)],
                         "price": [round(100 + (i * 37 % 1000) / 997, 4) for i in range(rows)],
                         "qty": [1 + i * 7 % 500 for i in range(rows)]})


def _stored(name: str) -> pd.DataFrame:
    dataset = get_dataset(f"imp_{name}")
    scale = Scale(days=len(dataset.all_days))
    frames = [dataset.day_frame(i, scale) for i in range(len(dataset.all_days))]
    return pd.concat(frames, ignore_index=True)[["exec_time", "sym", "price", "qty"]]


def _same(stored: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(stored.reset_index(drop=True).astype({"sym": object}),
                                  expected.reset_index(drop=True).astype({"sym": object}), check_dtype=False)


def _nothing_kept() -> bool:
    return not imports_dir().is_dir() or not any(imports_dir().iterdir())


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_text(text, encoding=encoding)
    return path


# --- epoch integers -------------------------------------------------------------------------------
@pytest.mark.parametrize("unit,factor", [("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)])
def test_epoch_integers_are_read_as_utc_instants_in_the_unit_their_magnitude_says(tmp_path, unit, factor):
    trades = _trades()
    trades["exec_time"] = trades["exec_time"].dt.floor({"s": "s", "ms": "ms", "us": "us", "ns": "ns"}[unit])
    ints = trades.assign(exec_time=trades["exec_time"].astype("int64") // factor)
    path = tmp_path / f"epoch_{unit}.csv"
    ints.to_csv(path, index=False)
    # a zone given for written times never shifts an epoch time: it is an instant already
    dataset = import_source(path, f"epoch_{unit}", ROLES, zone="America/New_York")
    assert dataset.manifest["epochs"] == {"exec_time": {"unit": unit, "from": "magnitude"}}
    assert dataset.manifest["zone"] == "UTC (epoch times are instants)"
    expected = trades if unit in ("us", "ns") else trades.assign(exec_time=trades["exec_time"].dt.floor("ms"))
    _same(_stored(f"epoch_{unit}"), expected)


def test_an_epoch_column_typed_as_a_timestamp_or_given_its_unit(tmp_path):
    trades = _trades()
    path = tmp_path / "ns.csv"
    trades.assign(exec_time=trades["exec_time"].astype("int64")).to_csv(path, index=False)
    typed = import_source(path, "typed", ROLES, types={"exec_time": "NANOTIMESTAMP"})
    assert typed.manifest["epochs"]["exec_time"] == {"unit": "ns", "from": "magnitude"}
    _same(_stored("typed"), trades)
    given = import_source(path, "given", ROLES, text=TextFormat(epoch="ns"))
    assert given.manifest["epochs"]["exec_time"] == {"unit": "ns", "from": "option"}
    with pytest.raises(ImportSourceError, match="overflow nanoseconds since 1970: are they in a finer unit"):
        import_source(path, "wrong_unit", ROLES, text=TextFormat(epoch="s"))


def test_small_integers_are_no_epoch_times(tmp_path):
    path = _write(tmp_path / "small.csv", "exec_time,sym,price,qty\n" + "".join(
        f"{i},A,1.0,1\n" for i in range(1, 50)))
    with pytest.raises(RoleError, match="column 'exec_time' is LONG, the time role needs a timestamp"):
        import_source(path, "small", ROLES)
    with pytest.raises(ImportSourceError, match=r"too small for epoch times .*say their unit \(--epoch"):
        import_source(path, "small", ROLES, types={"exec_time": "TIMESTAMP"})
    assert _nothing_kept()


# --- decimal comma, day-first times, a fraction of a second -----------------------------------------
def test_a_decimal_comma_and_day_first_times_with_nanoseconds(tmp_path):
    trades = _trades()
    lines = ["exec_time;sym;price;qty"] + [
        f"{t:%d/%m/%Y %H:%M:%S}.{t.nanosecond + 1000 * (t.microsecond):09d};{s};{str(p).replace('.', ',')};{q}"
        for t, s, p, q in trades.itertuples(index=False)]
    path = _write(tmp_path / "eu.csv", "\n".join(lines) + "\n")
    with pytest.raises(ImportSourceError) as refused:       # no format given: the value and the formats shown
        import_source(path, "eu", ROLES, text=TextFormat(decimal=","))
    assert str(refused.value) == (
        "eu.csv: column 'exec_time' is text ('10/03/2025 13:30:00.000000000' in its first row), and the time role "
        'needs times: read it with --time-format "%d/%m/%Y %H:%M:%S.%f" or --time-format "%m/%d/%Y %H:%M:%S.%f"')
    dataset = import_source(path, "eu", ROLES, text=TextFormat(decimal=",", time_format="%d/%m/%Y %H:%M:%S.%f"))
    assert dataset.manifest["text_format"] == {"decimal": ",", "time_format": "%d/%m/%Y %H:%M:%S.%f"}
    _same(_stored("eu"), trades)


def test_a_value_that_does_not_fit_the_time_format_names_line_column_and_format(tmp_path):
    path = _write(tmp_path / "dm.csv", "exec_time,sym\n10/03/2025 09:30:00,A\n11/03/2025 09:30:01,A\n"
                                       "2025/03/12 09:30:02,A\n")
    with pytest.raises(ImportSourceError) as refused:
        import_source(path, "dm", Roles(time="exec_time", key="sym"), text=TextFormat(time_format="%d/%m/%Y %H:%M:%S"))
    assert str(refused.value) == ("dm.csv line 4, column exec_time: '2025/03/12 09:30:02' is not a time in the format "
                                  "%d/%m/%Y %H:%M:%S (from --time-format); fix the row, set the column's type, or "
                                  "skip bad rows")
    skipped = import_source(path, "dm", Roles(time="exec_time", key="sym"), skip_bad_rows=True,
                            text=TextFormat(time_format="%d/%m/%Y %H:%M:%S"))
    assert skipped.rows == 2 and skipped.manifest["skipped"]["count"] == 1
    assert skipped.manifest["skipped"]["rows"][0].startswith("dm.csv line 4, column exec_time: '2025/03/12 09:30:02'")


# --- the dialect -------------------------------------------------------------------------------------
def test_quote_escape_null_markers_and_encoding(tmp_path):
    text = ("exec_time|sym|price|qty\n"
            "2025-03-10T13:30:00Z|'SOCIÉTÉ|GÉN'|10.5|1\n"
            "2025-03-10T13:30:01Z|'O\\'NEIL'|-|2\n"
            "2025-03-10T13:30:02Z|NA|11.0|3\n")
    path = _write(tmp_path / "latin.csv", text, encoding="latin-1")
    dataset = import_source(path, "latin", ROLES, text=TextFormat(quote="'", escape="\\", nulls=("-",),
                                                                  encoding="latin-1"))
    stored = _stored("latin")
    assert stored["sym"].tolist() == ["SOCIÉTÉ|GÉN", "O'NEIL", "NA"]          # "NA" is a ticker, not missing
    assert stored["price"].isna().tolist() == [False, True, False]
    assert dataset.manifest["text_format"] == {"quote": "'", "escape": "\\", "nulls": ["-"], "encoding": "latin-1"}


def test_a_ticker_named_na_survives_skipping_bad_rows(tmp_path):
    path = _write(tmp_path / "na.csv", "exec_time,sym,price,qty\n2025-03-10T09:30:00Z,NA,1.5,3\n"
                                       "2025-03-10T09:30:01Z,AAPL,x,4\n2025-03-10T09:30:02Z,NA,,5\n")
    dataset = import_source(path, "na", ROLES, types={"price": "DOUBLE"}, skip_bad_rows=True)
    stored = _stored("na")
    assert stored["sym"].tolist() == ["NA", "NA"] and stored["price"].isna().tolist() == [False, True]
    assert dataset.manifest["skipped"]["rows"] == ["na.csv line 3, column price: 'x' is not a number"]


@pytest.mark.parametrize("options,message", [
    ({"quote": "''"}, "the quote character must be one character"),
    ({"decimal": ";"}, "the decimal mark must be '.' or ','"),
    ({"encoding": "klingon"}, "unknown encoding 'klingon'"),
    ({"time_format": "dd/mm/yyyy"}, "has no % field"),
    ({"time_format": "%d/%m/%Y %H:%M:%S.%f UTC"}, "%f (the fraction of a second) can only end it"),
])
def test_options_that_cannot_be_used_are_refused_in_one_sentence(options, message):
    with pytest.raises(TextFormatError, match=re.escape(message)):
        TextFormat(**options)


# --- a quote that never closes ------------------------------------------------------------------------
@pytest.mark.parametrize("skip", [False, True])
def test_a_quote_that_never_closes_is_refused_in_one_line_naming_its_row(tmp_path, skip):
    rows = [f"{1741613400 + i},{TICKERS[i % 5]},{100 + i % 7}.5,{i + 1}" for i in range(12_000)]
    rows[30] = rows[30].replace(",", ',"', 1)                # the quote swallows 131,072 characters and more
    path = _write(tmp_path / "quote.csv", "exec_time,sym,price,qty\n" + "\n".join(rows) + "\n")
    with pytest.raises(ImportSourceError) as refused:
        import_source(path, "quote", ROLES, skip_bad_rows=skip)
    assert str(refused.value).startswith("quote.csv line 32: a quote opened in this row never closes")
    assert "--quote none" in str(refused.value) and "\n" not in str(refused.value)
    assert _nothing_kept()
    kept = import_source(path, "quote", ROLES, text=TextFormat(quote=""))     # the file quotes nothing
    assert kept.rows == 12_000 and '"' + TICKERS[0] in set(_stored("quote")["sym"])


# --- the command line ----------------------------------------------------------------------------------
def _tickbench(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=ROOT)


def test_the_command_line_reads_the_formats_and_says_how(tmp_path):
    trades = _trades(50)
    path = tmp_path / "t.csv"
    trades.assign(exec_time=trades["exec_time"].astype("int64") // 10**6,
                  price=trades["price"].map(lambda p: str(p).replace(".", ","))).to_csv(path, index=False, sep=";")
    home = tmp_path / "home"
    done = _tickbench(home, "import", str(path), "--name", "t", "--time", "exec_time", "--key", "sym", "--price",
                      "price", "--decimal", ",", "--epoch", "ms")
    assert done.returncode == 0, done.stderr
    assert "Integer times: exec_time: epoch milliseconds (as given)." in done.stdout
    assert "Read with decimal ','" in done.stdout
    refused = _tickbench(home, "import", str(path), "--name", "u", "--time", "exec_time", "--encoding", "klingon")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1] == (
        "tickbench: error: unknown encoding 'klingon': use a name such as utf-8, latin-1 or cp1252")


def test_importing_again_under_a_name_needs_replace(tmp_path):
    home = tmp_path / "home"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    _trades(30).to_csv(first, index=False)
    _trades(20).to_csv(second, index=False)
    args = ("--name", "mine", "--time", "exec_time", "--key", "sym")
    assert _tickbench(home, "import", str(first), *args).returncode == 0
    again = _tickbench(home, "import", str(second), *args)
    assert again.returncode == 2 and again.stderr.strip().splitlines()[-1] == (
        "tickbench: error: imp_mine exists (30 rows over 1 day, 2025-03-10 .. 2025-03-10): pass --replace to "
        "replace it, or choose another --name")
    replaced = _tickbench(home, "import", str(second), *args, "--replace")
    assert replaced.returncode == 0 and "Imported 20 rows" in replaced.stdout, replaced.stderr


def test_a_file_across_a_change_to_summer_time_records_both_offsets(tmp_path):
    # New York: -05:00 until 2025-03-09 02:00, -04:00 after; a row every minute over three days
    start = dt.datetime(2025, 3, 8, 12, 0, tzinfo=dt.timezone.utc)
    stamps = [start + dt.timedelta(minutes=i) for i in range(3 * 24 * 60)]
    zone = dt.timezone(dt.timedelta(hours=-5)), dt.timezone(dt.timedelta(hours=-4))
    switch = dt.datetime(2025, 3, 9, 7, 0, tzinfo=dt.timezone.utc)
    lines = [f"{t.astimezone(zone[t >= switch]).isoformat()},A" for t in stamps]
    path = _write(tmp_path / "dst.csv", "ts,sym\n" + "\n".join(lines) + "\n")
    dataset = import_source(path, "dst", Roles(time="ts", key="sym"))
    assert dataset.manifest["zone"] == "UTC offset -05:00, -04:00 (the file's zone, stored as UTC)"
    stored = pd.concat([get_dataset("imp_dst").day_frame(i, Scale(days=4)) for i in range(len(dataset.all_days))])
    assert stored["ts"].tolist() == [pd.Timestamp(t.replace(tzinfo=None)) for t in stamps]
