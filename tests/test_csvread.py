"""Reading users' CSV files into schema frames; every error names file, line and column."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workloads.datasets import DATASETS, get_dataset
from workloads.datasets.csv_parse import CsvFormatError
from workloads.datasets.csvread import iter_csv, read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.datasets.schema import Scale, StringMode

TAQ_HEADER = "Symbol,Date,Time,Bid,Ofr,BidSiz,OfrSiz,Mode,Ex,MMID"
GOOD_ROWS = [
    "AAPL,2007.08.23,09:30:00,136.5,136.52,1,2,12,N,NSDQ",
    "MSFT,20070823,09:30:01, 28.1 ,28.11,3,4,12,T,ARCX",
    "IBM,2007-08-23,15:59:59,110.25,110.3,10,7,1,P,NITE",
]


def _write(tmp_path: Path, text: str, name: str = "quotes.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _taq_file(tmp_path: Path, *extra_rows: str) -> Path:
    return _write(tmp_path, "\n".join([TAQ_HEADER, *GOOD_ROWS, *extra_rows]) + "\n")


# --- happy paths ---------------------------------------------------------------------------------
def test_taq_file_with_mixed_date_formats_and_case_insensitive_header(tmp_path):
    frame = read_csv(_taq_file(tmp_path), "taq")
    assert list(frame.columns) == get_dataset("taq").info.schema.names
    assert frame["symbol"].tolist() == ["AAPL", "MSFT", "IBM"]
    assert (frame["date"] == pd.Timestamp("2007-08-23")).all()
    assert frame["time"].tolist() == [pd.Timestamp("1970-01-01 09:30:00"), pd.Timestamp("1970-01-01 09:30:01"),
                                      pd.Timestamp("1970-01-01 15:59:59")]
    assert frame["bid"].tolist() == [136.5, 28.1, 110.25]
    assert frame["ex"].tolist() == [ord("N"), ord("T"), ord("P")]
    assert frame["bidsiz"].dtype == np.int32 and frame["ex"].dtype == np.int8


@pytest.mark.parametrize("strings", list(StringMode))
def test_string_modes(tmp_path, strings):
    frame = read_csv(_taq_file(tmp_path), "taq", strings=strings)
    for column in get_dataset("taq").info.schema.columns:
        assert frame[column.name].dtype == column.pandas_dtype(strings)
    assert frame["mmid"].astype(str).tolist() == ["NSDQ", "ARCX", "NITE"]


def test_mapping_extra_columns_blank_lines_and_quoted_fields(tmp_path):
    text = ('SYM,extra,DAY,TIME,BID_PRICE,OFR,BIDSIZ,OFRSIZ,MODE,EX,MMID\n'
            '"AAPL",x,2007.08.23,09:30:00,1.5,1.6,1,2,12,N,"NS,DQ"\n'
            '\n'
            'MSFT,"two\nlines",2007.08.23,09:30:01,2.5,2.6,3,4,12,T,ARCX\n')
    frame = read_csv(_write(tmp_path, text), "taq", mapping={"SYM": "symbol", "DAY": "date", "BID_PRICE": "bid"})
    assert frame["symbol"].tolist() == ["AAPL", "MSFT"]
    assert frame["mmid"].tolist() == ["NS,DQ", "ARCX"]
    assert frame["bid"].tolist() == [1.5, 2.5]


def test_empty_double_is_nan_and_header_only_file_gives_typed_empty_frame(tmp_path):
    frame = read_csv(_taq_file(tmp_path, "X,2007.08.23,10:00:00,,1.6,1,2,12,N,NSDQ"), "taq")
    assert np.isnan(frame["bid"].iloc[-1])
    empty = read_csv(_write(tmp_path, TAQ_HEADER + "\n", "empty.csv"), "taq")
    assert len(empty) == 0
    assert [str(t) for t in empty.dtypes] == [str(c.pandas_dtype(StringMode.ARROW))
                                              for c in get_dataset("taq").info.schema.columns]


def test_devices_readings_with_dolphindb_and_iso_timestamps(tmp_path):
    header = ("time,device_id,battery_level,battery_status,battery_temperature,bssid,cpu_avg_1min,"
              "cpu_avg_5min,cpu_avg_15min,mem_free,mem_used,rssi,ssid")
    rows = ["2016.11.15T07:00:00.123,demo000000,59,discharging,89.5,A0:B1:C5:D2:E0:F3,24.81,10.8,"
            "8.8,410011078,589988922,-50,stealth-net",
            "2016-11-15 07:00:00,demo000001,100,full,93.1,A0:B1:C5:D2:E0:F3,3.57,5.15,5.53,"
            "431509582,568490418,-61,FBI",
            "2016-11-16,demo000002,10,charging,90.0,A0:B1:C5:D2:E0:F3,1,1,1,1,2,-70,FBI"]
    frame = read_csv(_write(tmp_path, "\n".join([header, *rows]), "readings.csv"), "devices")
    assert frame["time"].tolist() == [pd.Timestamp("2016-11-15 07:00:00.123"),
                                      pd.Timestamp("2016-11-15 07:00:00"), pd.Timestamp("2016-11-16")]
    assert frame["rssi"].dtype == np.int16 and frame["mem_free"].dtype == np.int64
    assert frame["mem_used"].tolist() == [589988922, 568490418, 2]


def test_devices_info_table(tmp_path):
    text = "device_id,api_version,manufacturer,model,os_name\ndemo000000,23,iobeam,pinto,6.0.1\n"
    frame = read_csv(_write(tmp_path, text, "info.csv"), "devices.info", strings=StringMode.CATEGORY)
    assert frame["model"].tolist() == ["pinto"] and frame["api_version"].dtype == "category"
    with pytest.raises(ValueError, match="dataset 'taq' has no table 'info'"):
        read_csv(_write(tmp_path, text, "info.csv"), "taq.info")


def test_iter_csv_chunks_match_read_csv(tmp_path):
    scale = Scale(rows_per_day=2_500, symbols=40)
    path = tmp_path / "day.csv"
    write_csv(get_dataset("taq").generate_day(0, scale, chunk_rows=1_000), path, get_dataset("taq").info.schema)
    chunks = list(iter_csv(path, "taq", chunk_rows=600))
    assert [len(c) for c in chunks] == [600, 600, 600, 600, 100]
    pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), read_csv(path, "taq"), check_exact=True)
    assert len(list(iter_csv(_write(tmp_path, TAQ_HEADER + "\n", "h.csv"), "taq"))[0]) == 0


# --- errors name file, line and column ------------------------------------------------------------
@pytest.mark.parametrize("row, message", [
    ("X,2007.08.23,10:00:00,abc,1.6,1,2,12,N,NSDQ", "quotes.csv line 5, column 'Bid' (bid): 'abc' is not a number"),
    ("X,2007.08.23,10:00:00,1.5,1.6,3.5,2,12,N,NSDQ", "line 5, column 'BidSiz' (bidsiz): '3.5' is not a whole number"),
    ("X,2007.08.23,10:00:00,1.5,1.6,1,99999999999,12,N,NSDQ",
     "line 5, column 'OfrSiz' (ofrsiz): '99999999999' is out of range for INT"),
    ("X,2007.08.23,10:00:00,1.5,1.6,1,2,,N,NSDQ", "line 5, column 'Mode' (mode): '' is empty"),
    ("X,2007.02.30,10:00:00,1.5,1.6,1,2,12,N,NSDQ", "line 5, column 'Date' (date): '2007.02.30' is not a date"),
    ("X,23/08/2007,10:00:00,1.5,1.6,1,2,12,N,NSDQ", "line 5, column 'Date' (date): '23/08/2007' is not a date"),
    ("X,2007.08.23,10:61:00,1.5,1.6,1,2,12,N,NSDQ", "line 5, column 'Time' (time): '10:61:00' is not a time"),
    ("X,2007.08.23,10am,1.5,1.6,1,2,12,N,NSDQ", "line 5, column 'Time' (time): '10am' is not a time"),
    ("X,2007.08.23,10:00:00,1.5,1.6,1,2,12,NY,NSDQ", "line 5, column 'Ex' (ex): 'NY' is not a single character"),
    ("X,2007.08.23,10:00:00,1.5,1.6,1,2,12,N", "quotes.csv line 5: expected 10 fields as in the header, found 9"),
])
def test_each_error_kind_names_line_and_column(tmp_path, row, message):
    path = _taq_file(tmp_path, row, *GOOD_ROWS)
    with pytest.raises(CsvFormatError) as error:
        read_csv(path, "taq")
    assert message in str(error.value)
    with pytest.raises(CsvFormatError) as chunked:
        list(iter_csv(path, "taq", chunk_rows=2))
    assert message in str(chunked.value)


def test_line_numbers_count_blank_lines_and_multiline_fields(tmp_path):
    text = (TAQ_HEADER + "\n\n"
            'A,2007.08.23,09:30:00,1,2,1,1,12,N,"NS\nDQ"\n'
            "\n"
            "B,2007.08.23,09:30:00,1,2,1,1,12,N,NSDQ\n"
            "C,2007.08.23,09:30:00,1,two,1,1,12,N,NSDQ\n")
    with pytest.raises(CsvFormatError, match=r"quotes.csv line 7, column 'Ofr' \(ofr\): 'two' is not a number"):
        read_csv(_write(tmp_path, text), "taq")


def test_the_earliest_bad_line_is_reported(tmp_path):
    path = _taq_file(tmp_path, "X,2007.08.23,10:00:00,1,1.6,1,2,zz,N,NSDQ", "Y,2007.08.23,10:00:00,bad,1.6,1,2,12,N,NSDQ")
    with pytest.raises(CsvFormatError, match="line 5, column 'Mode'"):
        read_csv(path, "taq")


def test_missing_columns_are_listed_in_one_message(tmp_path):
    path = _write(tmp_path, "symbol,date,tim,bid\nA,2007.08.23,09:30:00,1\n")
    with pytest.raises(CsvFormatError) as error:
        read_csv(path, "taq")
    text = str(error.value)
    assert text.startswith("quotes.csv: missing columns time, ofr, bidsiz, ofrsiz, mode, ex, mmid for the taq schema")
    assert "the header has symbol, date, tim, bid" in text


def test_mapping_mistakes_and_empty_file(tmp_path):
    path = _taq_file(tmp_path)
    with pytest.raises(CsvFormatError, match="the mapping names column 'symbl', which the taq schema does not have"):
        read_csv(path, "taq", mapping={"Symbol": "symbl"})
    with pytest.raises(CsvFormatError, match="the mapping reads 'Ticker', which is not in the header"):
        read_csv(path, "taq", mapping={"Ticker": "symbol"})
    with pytest.raises(CsvFormatError, match="empty.csv is empty: expected a header row"):
        read_csv(_write(tmp_path, "", "empty.csv"), "taq")
    with pytest.raises(CsvFormatError, match="the header has Bid, BID; map one of them to 'bid'") as error:
        read_csv(_write(tmp_path, TAQ_HEADER.replace("Bid,", "Bid,BID,") + "\n", "twice.csv"), "taq")
    assert error.type is CsvFormatError and isinstance(error.value, ValueError)


def test_unknown_dataset_is_named(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'quotes'"):
        read_csv(_taq_file(tmp_path), "quotes")


# --- generated frames survive a CSV round trip; a bad cell anywhere is found ----------------------
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(list(DATASETS)), rows=st.integers(1, 400), seed=st.integers(0, 2**31),
       style=st.sampled_from(["dolphindb", "iso"]), strings=st.sampled_from(list(StringMode)))
def test_generated_frames_round_trip_through_csv(tmp_path, name, rows, seed, style, strings):
    dataset = get_dataset(name)
    scale = Scale(rows_per_day=rows, symbols=30, seed=seed)
    path = tmp_path / f"{name}.csv"
    write_csv(dataset.generate_day(0, scale, chunk_rows=97), path, dataset.info.schema, style)
    expected = dataset.day_frame(0, scale, strings)
    got = read_csv(path, name, strings=strings)
    if strings is StringMode.CATEGORY:  # category order depends on first appearance vs. vocabulary
        names = [c.name for c in dataset.info.schema.columns if c.is_string]
        expected, got = expected.astype({n: str for n in names}), got.astype({n: str for n in names})
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), bad=st.sampled_from(["x1", "1..2", "--", "12:00", "2007/13/45"]))
def test_a_bad_cell_anywhere_is_located(tmp_path, data, bad):
    schema = get_dataset("taq").info.schema
    frame = get_dataset("taq").day_frame(0, Scale(rows_per_day=300, symbols=20))
    path = tmp_path / "quotes.csv"
    write_csv(frame, path, schema, "iso")
    row = data.draw(st.integers(0, len(frame) - 1))
    column = data.draw(st.sampled_from(["date", "time", "bid", "ofr", "bidsiz", "mode"]))
    lines = path.read_text().splitlines()
    cells = lines[row + 1].split(",")
    cells[schema.names.index(column)] = bad
    lines[row + 1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CsvFormatError, match=rf"quotes.csv line {row + 2}, column '{column}': '{bad}'"):
        read_csv(path, "taq")
