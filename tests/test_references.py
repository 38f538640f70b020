"""Published reference figures: the shipped files load, agree with the SEEDS.md digest, and
malformed files are rejected with a message naming the file and the figure.

The digest's tables are parsed here rather than copied, so a typo in either the JSON or the
digest fails a test.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import duckdb
import pytest

from workloads.results.references import (
    FRAME_COLUMNS, ReferenceDataError, as_frame, load_reference_file, load_references,
    reference_folder, references_for,
)

SHIPPED = ("000_pickle_vs_api.json", "001_druid.json", "002_api_performance.json",
           "003_scaling.json", "004_mongodb.json")


def _find_digest() -> Path | None:
    candidates = [os.environ.get("TICKBENCH_SEEDS", ""),
                  Path(__file__).resolve().parent.parent / "docs" / "SEEDS.md",
                  Path(__file__).resolve().parents[2] / "shared" / "SEEDS.md"]
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)


DIGEST = _find_digest()
needs_digest = pytest.mark.skipif(DIGEST is None, reason="SEEDS.md digest not found (set TICKBENCH_SEEDS)")


def digest_section(report: str) -> str:
    """The text of one report's section of SEEDS.md ("## 003_...." up to the next "## ")."""
    text = DIGEST.read_text(encoding="utf-8")
    match = re.search(rf"^## {report}_.*?(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section for report {report} in {DIGEST}"
    return match.group(0)


def figures(report: str, **where) -> list:
    return [r for r in load_references() if r.report == report
            and all(getattr(r, k) == v for k, v in where.items())]


def one(report: str, **where):
    found = figures(report, **where)
    assert len(found) == 1, f"expected one figure for {report} {where}, found {len(found)}"
    return found[0]


# --- shipped files ----------------------------------------------------------------------------

def test_every_shipped_file_loads_and_names_its_source():
    assert sorted(p.name for p in reference_folder().glob("*.json")) == list(SHIPPED)
    for name in SHIPPED:
        refs = load_reference_file(reference_folder() / name)
        assert refs, name
        assert {r.report for r in refs} == {name[:3]}
        assert all(r.source_file.startswith(name[:3] + "_") and r.environment for r in refs)
    assert len(load_references()) == sum(len(load_reference_file(reference_folder() / n)) for n in SHIPPED)


def test_reports_with_image_tables_say_what_is_missing():
    for name in ("001_druid.json", "002_api_performance.json", "004_mongodb.json"):
        missing = json.loads((reference_folder() / name).read_text(encoding="utf-8"))["missing"]
        assert any("image" in m for m in missing), name


# --- agreement with the digest ------------------------------------------------------------------

@needs_digest
def test_report_000_read_day_tables_match_digest():
    section = digest_section("000")
    targets = {"DolphinDB server query": "dolphindb-server", "DolphinDB Python API": "dolphindb-api-python",
               "DolphinDB API": "dolphindb-api-python", "pickle": "pickle"}
    series, parsed = "all columns", {}
    for line in section.splitlines():
        if line.startswith("Without the two string columns"):
            series = "without the two string columns"
        row = re.match(r"^(L[12]) (.+?)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*$", line)
        if row:
            dataset = {"L1": "taq", "L2": "level2"}[row[1]]
            for cache, value in (("cold", row[3]), ("warm", row[4])):
                parsed[(dataset, targets[row[2]], series, cache)] = float(value)
    assert len(parsed) == 20  # 6 + 4 rows, cold and warm
    published = {(r.dataset, r.target, r.series, r.cache): r.value
                 for r in figures("000", experiment="read-day", unit="s", x=None)}
    assert published == parsed


@needs_digest
def test_report_000_concurrent_readers_match_digest():
    section = digest_section("000")
    rows = re.findall(r"(API to the local data node|API to three different nodes|pickle) (\d+) / (\d+) / (\d+)",
                      section)
    assert len(rows) == 3
    expected = {"dolphindb-api-python": [], "pickle": []}
    for name, *values in rows:
        expected["pickle" if name == "pickle" else "dolphindb-api-python"] += [float(v) for v in values]
    concurrent = figures("000", experiment="read-day", x=3, x_unit="users")
    assert {t: [r.value for r in concurrent if r.target == t] for t in expected} == expected


@needs_digest
def test_report_003_write_table_matches_digest():
    columns = [("dataSync=1", "M rows/s"), ("dataSync=1", "MB/s"), ("dataSync=1, counting both replicas", "MB/s"),
               ("dataSync=0", "M rows/s"), ("dataSync=0", "MB/s"), ("dataSync=0, counting both replicas", "MB/s")]
    rows = 0
    for line in digest_section("003").splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 7 and cells[0].isdigit():
            rows += 1
            for (series, unit), cell in zip(columns, cells[1:]):
                ref = one("003", experiment="concurrent-append", series=series, unit=unit, x=int(cells[0]))
                assert ref.value == float(cell), (series, unit, cells[0])
    assert rows == 4
    assert len(figures("003", experiment="concurrent-append")) == 4 * len(columns)


@needs_digest
def test_report_003_read_table_matches_digest():
    section = digest_section("003")
    table = section[section.index("users | 2 nodes"):]
    nodes, rows = (2, 4, 6, 8), 0
    for line in table.splitlines()[1:]:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) != 5 or not cells[0].isdigit():
            break
        rows += 1
        for n, cell in zip(nodes, cells[1:]):
            ref = one("003", experiment="slice-download", series=f"{n} nodes", unit="M rows/s", x=int(cells[0]))
            assert (ref.value, ref.cache) == (float(cell), "cold"), (cells[0], n)
    assert rows == 8
    assert len(figures("003", experiment="slice-download", unit="M rows/s")) == rows * len(nodes)

    at_128 = re.search(r"MB/s at 128 users: " + " / ".join([r"(\d+(?:\.\d+)?)"] * 4), section)
    for n, value in zip(nodes, at_128.groups()):
        assert one("003", experiment="slice-download", series=f"{n} nodes", unit="MB/s", x=128).value == float(value)


@needs_digest
def test_report_003_compute_matches_digest():
    section = digest_section("003")
    starts = [section.index(f"\n{letter}) ") for letter in "abc"] + [len(section)]
    experiments = ("spread-by-minute", "mapreduce-minute-bars", "ols-spread")
    for experiment, begin, end in zip(experiments, starts, starts[1:]):
        rows = re.findall(r"(\d)(?: nodes|:) ([\d,]+) / ([\d,]+) \(([\d.]+) / ([\d.]+)\)", section[begin:end])
        assert [int(r[0]) for r in rows] == [2, 4, 6, 8], experiment
        for node_text, cold_ms, warm_ms, cold_gb, warm_gb in rows:
            for cache, ms, gb in (("cold", cold_ms, cold_gb), ("warm", warm_ms, warm_gb)):
                where = dict(experiment=experiment, cache=cache, x=int(node_text), target="dolphindb-server")
                assert one("003", unit="ms", **where).value == float(ms.replace(",", ""))
                assert one("003", unit="GB/s", **where).value == float(gb)
        assert len(figures("003", experiment=experiment)) == 16


@needs_digest
@pytest.mark.parametrize("report", ["000", "001", "002", "003", "004"])
def test_every_rate_ratio_and_share_in_the_digest_is_recorded(report):
    """Each "N MB/s", "N-M GB/s", "Nx", "N%" of a report's digest is a figure of that report."""
    text = "\n".join(line for line in digest_section(report).splitlines()
                     if not line.startswith("Environment:"))  # hardware specs are not results
    number = r"(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?"
    tokens = [(lo, hi, unit) for lo, hi, unit in re.findall(number + r" ?(MB/s|GB/s)", text)]
    tokens += [(lo, hi, "x") for lo, hi in re.findall(number + r"x\b", text)]
    tokens += [(lo, hi, "%") for lo, hi in re.findall(number + r"%", text)]
    refs = figures(report)
    for lo, hi, unit in tokens:
        high = float(hi) if hi else None
        assert any(r.unit == unit and r.value == float(lo) and r.value_high == high for r in refs), \
            f"report {report}: digest figure {lo}{'-' + hi if hi else ''} {unit} is not in the reference data"


# --- validation ---------------------------------------------------------------------------------

GOOD_FIGURE = {"experiment": "read-day", "dataset": "taq", "target": "pickle", "cache": "cold",
               "series": "all columns", "value": 72, "unit": "s"}


def write_report(folder: Path, figures_: list, name: str = "009_broken.json", **head) -> Path:
    data = {"report": "009", "title": "t", "source_file": "009_x.txt", "environment": "e",
            "missing": [], "figures": figures_, **head}
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, words", [
    ({"unit": "MBs"}, ["'unit'", "'MBs'", "MB/s"]),
    ({"value": "72"}, ["'value'", "must be a number"]),
    ({"value": None}, ["'value'", "must be a number"]),
    ({"experiment": "read_day"}, ["'experiment'", "read-day"]),
    ({"cache": "hot"}, ["'cache'", "cold, warm"]),
    ({"x": 4}, ["'x' and 'x_unit' go together"]),
    ({"value_high": 50}, ["'value_high' 50 must be above 'value' 72"]),
    ({"colour": "red"}, ["unknown field(s) colour"]),
    ({"approx": "yes"}, ["'approx'", "true or false"]),
])
def test_malformed_figure_is_named_by_file_and_index(tmp_path, change, words):
    bad = {**GOOD_FIGURE, "series": "second", **change}
    path = write_report(tmp_path, [GOOD_FIGURE, bad])
    with pytest.raises(ReferenceDataError) as error:
        load_references(tmp_path)
    message = str(error.value)
    assert message.startswith(f"{path.name}: figure 1:"), message
    for word in words:
        assert word in message, message


def test_repeated_figure_is_rejected(tmp_path):
    write_report(tmp_path, [GOOD_FIGURE, {**GOOD_FIGURE, "value": 71}])
    with pytest.raises(ReferenceDataError, match=r"009_broken.json: figure 1 repeats figure 0"):
        load_references(tmp_path)


def test_broken_json_and_bad_header_are_named(tmp_path):
    (tmp_path / "009_broken.json").write_text('{"report": "009",\n "title": }', encoding="utf-8")
    with pytest.raises(ReferenceDataError, match=r"009_broken.json: not valid JSON: .* line 2, column 11"):
        load_references(tmp_path)
    write_report(tmp_path, [GOOD_FIGURE], report="010")
    with pytest.raises(ReferenceDataError, match=r"009_broken.json: 'report' '010' does not match the file name"):
        load_references(tmp_path)
    write_report(tmp_path, [])
    with pytest.raises(ReferenceDataError, match=r"009_broken.json: 'figures' must be a non-empty list"):
        load_references(tmp_path)
    with pytest.raises(ReferenceDataError, match="reference folder not found"):
        load_references(tmp_path / "nowhere")


# --- queries and the store frame ------------------------------------------------------------------

def test_references_for_filters_by_workload_dataset_and_target_family():
    read_day = references_for("read-day")
    assert read_day and {r.experiment for r in read_day} == {"read-day"}
    assert {r.report for r in read_day} == {"000"}

    level2_pickle = references_for("read-day", dataset="level2", target="pickle")
    assert level2_pickle and all(r.dataset == "level2" and r.target == "pickle" for r in level2_pickle)

    dolphindb = references_for("read-day", dataset="taq", target="dolphindb")
    assert {r.target for r in dolphindb} == {"dolphindb-server", "dolphindb-api-python"}

    uploads = references_for("upload-sweep", target="dolphindb-api")
    assert {r.target for r in uploads} == {f"dolphindb-api-{lang}" for lang in ("cpp", "java", "python", "r", "csharp")}
    assert [r.value_text for r in references_for("upload-sweep", target="dolphindb-api-python")] == ["160-200 MB/s"]

    assert references_for("read-day", target="dolphin") == []  # a family is a whole name, not a prefix
    assert references_for("no-such-workload") == []


def test_as_frame_fits_the_store_references_table():
    refs = load_references()
    frame = as_frame(refs)
    assert list(frame.columns) == list(FRAME_COLUMNS) and len(frame) == len(refs)
    con = duckdb.connect()
    con.execute('CREATE TABLE "references" (source VARCHAR, experiment VARCHAR, series VARCHAR, x VARCHAR, '
                'value DOUBLE, unit VARCHAR, note VARCHAR)')
    con.execute('INSERT INTO "references" SELECT * FROM frame')
    row = con.execute("""SELECT x, value, note FROM "references"
                         WHERE experiment = 'slice-download' AND series LIKE '%5 years%'""").fetchone()
    assert row == ("64 users", 350.0, row[2]) and row[2].startswith("as published: ~350-380 MB/s")
    assert con.execute("""SELECT count(*) FROM "references" WHERE source LIKE '003:%'""").fetchone()[0] \
        == len([r for r in refs if r.report == "003"])


def test_published_sweeps_group_users_series_in_base_units():
    from workloads.results.references import published_sweeps
    sweeps = {(s.label, s.metric): s for s in published_sweeps("slice-download", "taq")}
    eight = sweeps[("report 003, 8 nodes", "rows_per_s")]
    assert eight.users[0] == 1 and eight.users[-1] == 128
    assert eight.values[-1] == pytest.approx(36.5e6)          # 36.50 M rows/s at 128 users
    assert sweeps[("report 003, 8 nodes", "bytes_per_s")].values[-1] == pytest.approx(1566.4e6)
    assert published_sweeps("read-day", "taq") == []           # no users sweep published there


def test_an_edited_reference_file_is_read_again(tmp_path):
    # references are parsed once per version of the files (each run start asks for them)
    path = write_report(tmp_path, [GOOD_FIGURE])
    assert [r.value for r in load_references(tmp_path)] == [72]
    write_report(tmp_path, [{**GOOD_FIGURE, "value": 75}, {**GOOD_FIGURE, "series": "second"}])
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert sorted(r.value for r in load_references(tmp_path)) == [72, 75]
    loaded = load_references(tmp_path)
    loaded.clear()                         # a caller's list is its own
    assert len(load_references(tmp_path)) == 2
