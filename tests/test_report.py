"""The run report: HTML with the store's figures and embedded charts, the same as PDF, published
figures beside measured ones only where they compare, and never a test server's as DolphinDB's."""
from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QBuffer, QIODevice, QSizeF
from PySide6.QtGui import QColor, QFont, QImage, QTextDocument, QTextTable
from PySide6.QtWidgets import QLabel

try:  # fixtures live in tests/qt_conftest_snippet.py until merged into tests/conftest.py
    from tests.qt_conftest_snippet import isolated_qt_settings, light_theme  # noqa: F401
except ImportError:
    pass

from app.report.document import fmt_num, pdf_document, pdf_page_size, write_report
from app.report.tables import STEPS_HEADER
from tests.ddbserver.fixture import ddb_server  # noqa: F401
from tests.figures_reference import reference_steps
from tests.test_history import STEP0, STEP1, TINY, handmade_run, op
from widgets.charts.breakdown import MEASURED_LABEL, PUBLISHED_LABEL
from widgets.charts.live import TimeSeriesChart
from workloads.results.figures import step_figures
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore, StoreError

REAL_DOLPHINDB = {"host": "lab", "target": {"kind": "dolphindb", "server_version": "2.00.11 2024.01.01",
                                            "profile": {"nodes": [{"host": "127.0.0.1", "port": 8848}]}}}


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts; <img> sources too."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.images: list[str] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def table_with(self, first_header: str, column: str) -> list[dict[str, str]]:
        for table in self.tables:
            if table and table[0] and table[0][0] == first_header and column in table[0]:
                return [dict(zip(table[0], row)) for row in table[1:]]
        raise AssertionError(f"no table starting with {first_header!r} has a column {column!r}")


def png_images(sources: list[str]) -> list[QImage]:
    images = []
    for src in sources:
        assert src.startswith("data:image/png;base64,"), src[:40]
        image = QImage.fromData(base64.b64decode(src.split(",", 1)[1]), "PNG")
        assert not image.isNull()
        images.append(image)
    return images


def pdf_pages(path: Path) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", path.read_bytes()))


def pdf_text(path: Path) -> str:
    """The PDF's text as a viewer extracts it (PDFium, Chrome's PDF engine, through pypdfium2: no
    tool to install), every run of blanks one space."""
    import pypdfium2 as pdfium
    document = pdfium.PdfDocument(str(path))
    try:
        return " ".join(" ".join(page.get_textpage().get_text_range() for page in document).split())
    finally:
        document.close()


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


@pytest.fixture
def exact(store):
    handmade_run(store, "exact", [(2, 3.0, STEP0), (3, 8.0, STEP1)])
    store.set_worker("exact", 1, 1, 201, "", "failed", "worker process killed by SIGKILL", -9)
    return "exact"


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """A DuckDB read-day users sweep run for real."""
    folder = tmp_path_factory.mktemp("report_real")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKBENCH_HOME", str(folder / "home"))
        store = ResultsStore(folder / "results")
        result = Runner(Scenario(dataset="taq", scale=TINY, target="duckdb", workload="read-day",
                                 target_config={"path": str(folder / "data.duckdb")},
                                 users=(1, 2), operations=3), store).run()
    assert result.status == "completed", result.message
    yield store, result.run_id
    store.close()


# --- HTML: the store's figures, charts that decode ------------------------------------------

def test_html_report_has_the_exact_figures_of_each_step(store, exact, tmp_path, qtbot, light_theme):
    path = write_report(store, [exact], tmp_path / "report.html")
    page = Tables(path.read_text(encoding="utf-8"))
    steps = page.table_with("Step", "Rows/s")
    assert [s["Users"] for s in steps] == ["2", "3"]
    # step 0: 4 ok ops of 10 rows in 3 s, totals 0.1..0.4 s; step 1: 300 rows in 8 s
    assert steps[0]["Rows/s"] == "13.3" and steps[0]["Err"] == "1" and steps[0]["Ops"] == "4"
    assert steps[0]["p50ms"] == "250" and steps[0]["p95ms"] == "385"
    assert steps[1]["Rows/s"] == "37.5" and steps[1]["p50ms"] == "500"
    phases = page.table_with("Step", "decodems")      # a table of its own under the figures
    assert phases[1]["decodems"] == fmt_num(np.mean([0.04, 0.30, 0.40]) * 1000) == "247"
    assert phases[1]["From"] == "3 measured"
    assert "ioms" not in phases[0]                     # no record reported an io phase
    errors = page.table_with("Step", "Error")
    assert errors == [{"Step": "3 users", "Worker": "1", "State": "failed",
                       "Error": "worker process killed by SIGKILL"}]
    images = png_images(page.images)
    assert len(images) >= 4 and all(i.width() >= 300 for i in images)   # time series, breakdown, sweep


def test_html_report_of_a_real_run_holds_store_figures_charts_and_environment(real_run, tmp_path, qtbot,
                                                                              light_theme):
    store, run_id = real_run
    text = write_report(store, [run_id], tmp_path / "real.html").read_text(encoding="utf-8")
    page = Tables(text)
    reference = reference_steps(store.ops(run_id))       # figures from the raw records, independently
    steps = page.table_with("Step", "Rows/s")
    phases = page.table_with("Step", "queryms")
    assert len(steps) == len(phases) == len(reference) == 2
    for row, phase, fig in zip(steps, phases, (reference[0], reference[1])):
        assert row["Rows/s"] == fmt_num(fig["rows_per_s"]) and row["MB/s"] == fmt_num(fig["mb_per_s"])
        assert row["p99ms"] == fmt_num(fig["p99_s"] * 1000)
        assert phase["queryms"] == fmt_num(fig["phases"]["query"][0] * 1000)
        assert row["1st opms"] == fmt_num(fig["first_op_s"] * 1000)
        assert row["Wins"] == fmt_num(fig["window_s"])
    assert "Measurement window: from the release of the workers" in text
    images = png_images(page.images)
    titles = re.findall(r"alt='([^']+)'", text)
    # a short run's series are drawn operation by operation, and their titles say so
    assert {"Phases per operation (mean)", "Scaling with concurrent users"} <= set(titles)
    assert any(t.startswith("Rows per second") for t in titles) and any(t.startswith("Latency") for t in titles)
    assert len(images) == len(titles)
    environment = dict(row for row in page.tables[-1])
    run = store.run(run_id)
    assert environment["Host"] == run["environment"]["host"]
    assert environment["Python"] == run["environment"]["python"]
    assert f"duckdb {run['environment']['libraries']['duckdb']}" in environment["Libraries"]
    assert environment["Cache methods applied"] == "1 user: none (warm); 2 users: none (warm)"
    load = run["environment"]["load_average"]
    assert environment["Load average at the start (1, 5, 15 min)"].startswith(f"{load[0]:.2f}, {load[1]:.2f}")
    # published figures of report 000 for read-day on TAQ, labelled; nothing measured beside them
    published = page.table_with("Report", PUBLISHED_LABEL)
    assert {"Report": "000", "Figure": "pickle, taq, cold, all columns", PUBLISHED_LABEL: "72 s",
            MEASURED_LABEL: "–", "Note": ""} in published
    assert {row[MEASURED_LABEL] for row in published} == {"–"}      # this run's column, dashes explained
    assert f"{MEASURED_LABEL}: this run against duckdb at" in text


def test_caller_charts_are_embedded_as_they_are(store, exact, tmp_path, qtbot, light_theme):
    chart = TimeSeriesChart("On screen", y_unit="rows/s")
    label = QLabel("a plain widget")
    for widget, size in ((chart, (500, 260)), (label, (200, 40))):
        qtbot.addWidget(widget)
        widget.resize(*size)
        widget.show()
    chart.set_series("rows/s", [1, 2, 3], [10, 30, 20])
    page = Tables(write_report(store, [exact], tmp_path / "given.html",
                               charts={"Throughput now": chart, "Label": label}).read_text(encoding="utf-8"))
    images = png_images(page.images)
    assert [(i.width(), i.height()) for i in images] == [(500, 260), (200, 40)]


# --- published beside measured -----------------------------------------------------------------

def test_measured_stands_beside_published_only_where_they_compare(store, tmp_path, qtbot, light_theme):
    handmade_run(store, "pickle-cold", [(1, 2.0, [op(0, 0, i, 0.5 * (i + 1), 0.2 + 0.1 * i) for i in range(3)]),
                                        (3, 2.0, [op(1, w, 0, 1.0, 0.9) for w in range(3)])],
                 target="pickle", cache="cold")
    html = write_report(store, ["pickle-cold"], tmp_path / "p.html").read_text(encoding="utf-8")
    page = Tables(html)
    rows = {r["Figure"]: r for r in page.table_with("Report", PUBLISHED_LABEL)}
    # a cold step says why its operations did not hold cold (these hand-made ones record no reason)
    assert "1 users: cold: 0 of 3 operations (cleared: no operation held cold); not cold: 3: no reason recorded" in html
    # a single reader's mean seconds per operation, beside pickle's cold figures only
    assert rows["pickle, taq, cold, all columns"][MEASURED_LABEL] == "0.3 s (1 users)"
    assert rows["pickle, taq, warm, all columns"][MEASURED_LABEL] == "–"
    assert rows["pickle, taq, cold, without the two string columns"][MEASURED_LABEL] == "–"
    assert rows["dolphindb-api-python, taq, cold, all columns"][MEASURED_LABEL] == "–"
    # throughput: the best step (240 bytes in 2 s), in the unit that keeps it at 1 or more
    assert rows["pickle, cold, single-HDD read limit"][MEASURED_LABEL] == "120 B/s (1 users)"


def test_a_dolphindb_server_that_says_its_version_is_compared_with_dolphindb(store, tmp_path, qtbot,
                                                                             light_theme):
    records = [op(0, 0, i, 0.5 * (i + 1), 0.4, query=None) for i in range(3)]
    records = [r._replace(server_s=0.1, transfer_s=0.1, decode_s=0.2) for r in records]
    handmade_run(store, "ddb", [(1, 2.0, records)], target="dolphindb", cache="cold", environment=REAL_DOLPHINDB)
    text = write_report(store, ["ddb"], tmp_path / "d.html").read_text(encoding="utf-8")
    rows = {r["Figure"]: r for r in Tables(text).table_with("Report", PUBLISHED_LABEL)}
    assert rows["dolphindb-server, taq, cold, all columns"][MEASURED_LABEL] == "0.1 s (1 users)"
    assert rows["dolphindb-api-python, taq, cold, all columns"][MEASURED_LABEL] == "0.4 s (1 users)"
    assert "a server reporting version 2.00.11 2024.01.01 at 127.0.0.1:8848" in text


@pytest.mark.timeout(180)
def test_a_test_server_run_is_never_called_dolphindb(ddb_server, tmp_path, qtbot, light_theme):  # noqa: F811
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=TINY, target="dolphindb", workload="read-day", cache="cold",
                        target_config={"host": ddb_server.host, "port": ddb_server.port, "user": "admin",
                                       "password": "123456", "timeout": 5}, users=(1,), operations=3)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    text = write_report(store, [result.run_id], tmp_path / "t.html").read_text(encoding="utf-8")
    page = Tables(text)
    published = page.table_with("Report", PUBLISHED_LABEL)
    assert any(r["Figure"].startswith("dolphindb-api-python, taq, cold") for r in published)
    assert {r[MEASURED_LABEL] for r in published} == {"–"}     # nothing measured is set beside DolphinDB's
    assert "Tickbench's DolphinDB wire-protocol test server" in html.unescape(text) and "not a DolphinDB server" in text
    name = store.run(result.run_id)["name"]            # an unnamed run is named by what it is
    assert page.table_with("Run", "Took")[0]["Run"] == f"{name} (test server){result.run_id}"
    assert name.startswith("dolphindb")
    assert f"127.0.0.1:{ddb_server.port}" in text
    phases = page.table_with("Step", "serverms")
    reference = reference_steps(store.ops(result.run_id))
    assert reference[0]["phase_source"] == "probe"
    assert phases[0]["serverms"] == fmt_num(reference[0]["phases"]["server"][0] * 1000)
    assert phases[0]["From"].endswith(" probe")
    assert "probe operations" in text
    store.close()


# --- several runs, PDF, bad input --------------------------------------------------------------

def test_report_of_several_runs_compares_them(store, exact, tmp_path, qtbot, light_theme):
    handmade_run(store, "other", [(1, 2.0, [op(0, 0, 0, 1.0, 0.25, query=0.1, decode=0.15)])],
                 name="other scenario")
    page = Tables(write_report(store, [exact, "other"], tmp_path / "two.html").read_text(encoding="utf-8"))
    compared = page.table_with("Run", "Step")
    assert [(r["Run"], r["Step"], r["Rows/s"]) for r in compared] == [
        ("duckdb read-day", "2 users ⚠", "13.3"), ("duckdb read-day", "3 users ⚠", "37.5"),
        ("other scenario", "1 users ⚠", "5")]                  # hand-made steps of a few operations


def test_pdf_has_pages_with_the_figures(real_run, tmp_path, qtbot, light_theme):
    store, run_id = real_run
    path = write_report(store, [run_id], tmp_path / "report.pdf")
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and pdf_pages(path) >= 2
    assert b"/Image" in data                                  # the charts are in it
    text = pdf_text(path)
    figures = step_figures(store, run_id)
    assert fmt_num(figures["rows_per_s"].iloc[0]) in text and "page 1 of" in text
    assert PUBLISHED_LABEL in text


def test_bad_requests_are_refused_clearly(store, exact, tmp_path, qtbot):
    with pytest.raises(ValueError, match="use a .html or .pdf"):
        write_report(store, [exact], tmp_path / "report.docx")
    with pytest.raises(ValueError, match="no runs selected"):
        write_report(store, [], tmp_path / "report.html")
    with pytest.raises(StoreError, match="no run 'nope'"):
        write_report(store, ["nope"], tmp_path / "report.html")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_report(store, [exact], tmp_path / "missing" / "report.html")


def test_report_of_query_suites_sets_queries_side_by_side(tmp_path, qapp, light_theme):  # noqa: F811
    """Two query-suite runs (DuckDB and Parquet) of a user suite where one text is wrong on purpose:
    the report's per-query tables, the comparison with the differing answer marked, footprints,
    the published query figures of reports 001 and 004, and a PDF of the same."""
    from workloads.datasets.schema import Scale
    from workloads.results.suite_figures import geometric_mean

    from workloads.queries.suites import user_suites_dir

    suites = user_suites_dir()
    suites.mkdir(parents=True, exist_ok=True)
    (suites / "mine.toml").write_text(
        'dataset = "taq"\n'
        '[[query]]\nid = "spread"\ncategory = "group by symbol"\ndescription = "spread sums"\n'
        'params = { day = "day:-1" }\ncolumns = ["symbol", "spread"]\ndays = "day"\n'
        'duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} WHERE date = $day GROUP BY symbol"\n'
        'pandas = "taq_spread_sum"\n'
        '[[query]]\nid = "wrong"\ncategory = "group by symbol"\ndescription = "every day, by mistake"\n'
        'params = { day = "day:-1" }\ncolumns = ["symbol", "spread"]\ndays = "day"\n'
        'duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} GROUP BY symbol"\n'
        'pandas = "taq_spread_sum"\n')
    store = ResultsStore(tmp_path / "results")
    scale = Scale(days=2, rows_per_day=8_000, symbols=10)
    ids = []
    for target, config in (("duckdb", {"path": str(tmp_path / "d.duckdb")}), ("parquet", {"root": str(tmp_path)})):
        scenario = Scenario(name=f"{target} suite", dataset="taq", scale=scale, target=target, target_config=config,
                            workload="query-suite", params={"suite": "mine", "repetitions": 3})
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        ids.append(result.run_id)
    page = write_report(store, ids, tmp_path / "suites.html").read_text()
    tables = Tables(page)
    across = tables.table_with("Query", "parquet suite")
    assert [r["Query"] for r in across] == ["spread", "wrong", "geometric mean"]
    assert "≠" in across[1]["parquet suite"] and "≠" not in across[0]["parquet suite"]
    per_run = tables.table_with("Query", "Answer")
    assert [r["Status"] for r in per_run] == ["ok", "ok"]
    means = [float(r["Meanms"]) for r in per_run]         # the header's <br> reads as nothing
    assert float(across[2]["duckdb suite"]) == pytest.approx(geometric_mean(means), rel=0.01)
    footprints = tables.table_with("Table", "CSV ÷disk")
    assert {r["Table"] for r in footprints} == {"duckdb suite", "parquet suite"}
    assert "query speed vs Druid" in page and "static disk size above Druid" in page
    assert "operations per user" not in page
    assert len(png_images(tables.images)) >= 4        # query and footprint charts among them
    pdf = write_report(store, ids, tmp_path / "suites.pdf")
    assert pdf.stat().st_size > 20_000
    store.close()


# --- the PDF's pages: nothing cut, overlapping or left alone ---------------------------------

def pdf_html(store, run_ids, tmp_path, monkeypatch) -> str:
    """The HTML write_report lays out on PDF pages (and the PDF itself is written too)."""
    import app.report.document as report

    captured = {}
    real = report.write_pdf

    def capture(document, path, title="Tickbench report"):
        captured["html"] = document
        return real(document, path, title)

    monkeypatch.setattr(report, "write_pdf", capture)
    write_report(store, run_ids, tmp_path / "layout.pdf")
    return captured["html"]


def _tables(document: QTextDocument) -> list[QTextTable]:
    found, frames = [], [document.rootFrame()]
    while frames:
        frame = frames.pop(0)
        for child in frame.childFrames():
            if isinstance(child, QTextTable):
                found.append(child)
            frames.append(child)
    return found


def _line_page(document: QTextDocument, block, line: int = 0) -> int:
    """The page a block's line is drawn on (a line that does not fit moves to the next page)."""
    layout = block.layout()
    y = document.documentLayout().blockBoundingRect(block).top() + (layout.lineAt(line).y() if layout.lineCount() else 0)
    return int((y + 1) // document.pageSize().height())


def _is_image(block) -> bool:
    return "\ufffc" in block.text()


def layout_faults(document: QTextDocument) -> list[str]:
    """What a reader would see as broken on the pages: a table wider than the page, a word cut
    over two lines ("Worklo / ad"), a heading alone at the foot of a page, a chart and its
    caption on two pages, a table row cut in two by a page's foot."""
    faults = []
    layout = document.documentLayout()
    width = document.pageSize().width()
    if layout.documentSize().width() > width + 0.5:
        faults.append(f"the pages are {layout.documentSize().width() - width:.0f} px too narrow for their content")
    for table in _tables(document):
        name = table.cellAt(0, 0).firstCursorPosition().block().text()
        right = max(layout.blockBoundingRect(table.cellAt(r, c).firstCursorPosition().block()).right()
                    for r in range(table.rows()) for c in range(table.columns()))
        if right > width + 0.5:
            faults.append(f"table {name!r} is {right - width:.0f} px wider than the page")
        for row in range(table.rows()):
            pages = set()
            for column in range(table.columns()):
                cell = table.cellAt(row, column)
                block = cell.firstCursorPosition().block()
                last = cell.lastCursorPosition().block()
                while True:
                    text, lines = block.text(), block.layout()
                    for i in range(lines.lineCount()):
                        pages.add(_line_page(document, block, i))
                        start = lines.lineAt(i).textStart()
                        if i and start and text[start - 1].isalnum() and text[start].isalnum():
                            faults.append(f"table {name!r}: {text[:start]!r} / {text[start:]!r} breaks a word")
                    if block == last:
                        break
                    block = block.next()
            if len(pages) > 1 and row >= table.format().headerRowCount():
                faults.append(f"table {name!r}: row {row} is cut by the foot of page {min(pages) + 1}")
    block = document.begin()
    while block.isValid() and block.next().isValid():
        following = block.next()
        heading = block.blockFormat().headingLevel() > 0
        caption = _is_image(block) and following.text().strip() and not _is_image(following) \
            and following.blockFormat().headingLevel() == 0
        if (heading or caption) and _line_page(document, following) != _line_page(document, block):
            what = f"heading {block.text()!r}" if heading else f"the caption {following.text()[:30]!r}"
            faults.append(f"{what} is on page {_line_page(document, block) + 1}, "
                          f"what goes with it on page {_line_page(document, following) + 1}")
        block = following
    return faults


def plain_layout(html: str, width: float, height: float) -> QTextDocument:
    """The HTML laid out as QTextDocument does by itself, with the report's font and pages."""
    document = QTextDocument()
    document.setDefaultFont(QFont("DejaVu Sans", 9))
    document.setDocumentMargin(0)
    document.setPageSize(QSizeF(width, height))
    document.setHtml(html)
    document.pageCount()
    return document


def png_data_uri(width: int, height: int) -> str:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#0072B2"))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(bytes(buffer.data())).decode("ascii")


def at_the_foot(make_html, fault: str, width: float = 680.0, height: float = 500.0) -> str:
    """The first of make_html(0), make_html(1), ... (more filler lines above) whose plain layout
    shows ``fault``: the case to fix, found rather than guessed from font metrics."""
    for lines in range(120):
        html = make_html(lines)
        if any(fault in f for f in layout_faults(plain_layout(html, width, height))):
            return html
    raise AssertionError(f"no filler puts {fault!r} on the page's foot")


def _filler(lines: int) -> str:
    return "".join(f"<p>filler line {i}</p>" for i in range(lines))


def test_a_heading_never_ends_a_page_alone(qapp):
    image = png_data_uri(600, 300)
    html = at_the_foot(lambda n: f"{_filler(n)}<h3>Charts</h3><p class='chart'><img src='{image}' width='600'></p>"
                                 "<p class='caption'>rows per second</p><p>after</p>", "heading 'Charts'")
    document = pdf_document(html, 680.0, 500.0)
    assert layout_faults(document) == []
    block = document.begin()
    while block.text() != "Charts":
        block = block.next()
    assert _line_page(document, block) == _line_page(document, block.next()) == 1


def test_a_chart_keeps_its_caption(qapp):
    image = png_data_uri(600, 300)
    html = at_the_foot(lambda n: f"{_filler(n)}<p class='chart'><img src='{image}' width='600'></p>"
                                 "<p class='caption'>rows per second, by second</p><p>after</p>", "the caption")
    assert layout_faults(pdf_document(html, 680.0, 500.0)) == []


def test_a_table_row_is_never_cut_by_a_page_foot(qapp):
    from app.report.as_html import html_table

    rows = [[f"row {i}", "a note long enough to take several lines in its narrow column " * (2 + i % 3)]
            for i in range(12)]
    table = html_table(["Name", "Note"], rows, wrap=(1,))
    html = at_the_foot(lambda n: f"{_filler(n)}{table}", "is cut by the foot")
    document = pdf_document(html, 680.0, 500.0)
    assert layout_faults(document) == []
    parts = _tables(document)
    assert len(parts) >= 2                                   # split before the row, on a new page
    assert all(p.cellAt(0, 0).firstCursorPosition().block().text() == "Name" for p in parts)
    names = [p.cellAt(r, 0).firstCursorPosition().block().text() for p in parts for r in range(1, p.rows())]
    assert names == [f"row {i}" for i in range(12)]          # every row once, in order


def test_a_split_tables_column_widths_never_add_up_past_the_page():
    from app.report.as_pdf import _with_widths

    # to the nearest tenth these would be 25.1 + 25.1 + 49.9 = 100.1 %: a table 1 px wider than the page
    row = _with_widths("<tr><th>a</th><th>b</th><th>c</th></tr>", "th", [0.2505, 0.2505, 0.499])
    widths = [float(w) for w in re.findall(r"width='([0-9.]+)%'", row)]
    assert len(widths) == 3 and sum(widths) <= 100.0 and min(widths) >= 24.9


def _styled(body: str) -> str:
    """``body`` under the report's own stylesheet."""
    css = (Path(__file__).resolve().parent.parent / "resources/templates/report/report.css").read_text()
    return f"<html><head><style>{css}</style></head><body>{body}</body></html>"


def _cell_points(document: QTextDocument) -> float:
    table = _tables(document)[0]
    return table.cellAt(1, 1).firstCursorPosition().charFormat().font().pointSizeF()


def test_a_table_of_many_columns_is_never_a_pixel_wider_than_the_page(qapp):
    from app.report.as_html import html_table

    # a run's step table as the gallery's 002 run had it: Qt rounds 13 columns of 100 % to 682 px
    row = ["1 user", "1", "92", "0", "1.01", "27,402,522", "1,233", "91.3", "10.5", "12.1", "12.9", "10.6", "22.2"]
    html = _styled(html_table(STEPS_HEADER, [row], numeric_from=1))
    width, height = pdf_page_size()
    assert any("too narrow" in f for f in layout_faults(plain_layout(html, width, height)))   # the case to fix
    document = pdf_document(html, width, height)
    assert layout_faults(document) == []
    assert _cell_points(document) == 8.5                     # narrowed, in the stylesheet's type


def _numbers_table(columns: int) -> str:
    from app.report.as_html import html_table

    return _styled(html_table([f"c{i}" for i in range(columns)], [["1,234,567,890"] * columns], numeric_from=0))


def _plain_width(html: str, width: float, height: float) -> float:
    document = plain_layout(html, width, height)
    return document.documentLayout().documentSize().width()


def test_a_table_too_wide_for_its_words_is_set_in_smaller_type(qapp):
    width, height = pdf_page_size()
    # the fewest columns of unbreakable figures that overflow the page by more than narrowing can take
    columns = next(n for n in range(4, 30) if _plain_width(_numbers_table(n), width, height) > 1.06 * width)
    document = pdf_document(_numbers_table(columns), width, height)
    assert layout_faults(document) == []
    assert _cell_points(document) < 8.5


def test_a_table_too_wide_at_any_type_keeps_its_fault_in_view(qapp):
    width, height = pdf_page_size()
    document = pdf_document(_numbers_table(40), width, height)
    assert any("too narrow" in f for f in layout_faults(document))   # shown to the test, not looped on
    assert _cell_points(document) == 6.5


@pytest.fixture
def wide_runs(store, exact):
    """Runs whose names are long and whose phases, together, are all six."""
    records = [op(0, 0, i, 0.5 * (i + 1), 0.6, query=None)._replace(
        io_s=0.05, read_s=0.05, query_s=0.1, server_s=0.1, transfer_s=0.1, decode_s=0.2) for i in range(3)]
    handmade_run(store, "every-phase", [(1, 2.0, records), (16, 2.0, records)],
                 name="a scenario whose name is much longer than any column of a table could hold on A4",
                 cache="cold")
    return [exact, "every-phase"]


def test_pdf_pages_of_several_runs_have_nothing_cut_or_alone(store, wide_runs, tmp_path, monkeypatch, qtbot,
                                                              light_theme):
    html = pdf_html(store, wide_runs, tmp_path, monkeypatch)
    document = pdf_document(html, *pdf_page_size())
    assert layout_faults(document) == []
    runs = next(t for t in _tables(document) if t.cellAt(0, 0).firstCursorPosition().block().text() == "Run"
                and t.cellAt(0, t.columns() - 1).firstCursorPosition().block().text() == "Took")
    headers = [runs.cellAt(0, c).firstCursorPosition().block().text() for c in range(runs.columns())]
    # "Started" over "(UTC)", as the dates over their times: the columns fit A4 beside long workload names
    assert headers == ["Run", "Workload", "Dataset", "Target", "Users", "Status", "Started\u2028(UTC)", "Took"]
    # the phases have tables of their own: the figures keep their width whatever the targets split
    phase_tables = [t for t in _tables(document) if t.cellAt(0, t.columns() - 1).firstCursorPosition()
                    .block().text().startswith("decode")]
    assert phase_tables and max(t.columns() for t in phase_tables) == 3 + 6     # Run, Step, From + 6 phases
    assert pdf_pages(tmp_path / "layout.pdf") == document.pageCount()


def test_html_table_headers_keep_their_words(store, wide_runs, tmp_path, qtbot, light_theme):
    text = write_report(store, wide_runs, tmp_path / "wide.html").read_text(encoding="utf-8")
    assert "<th class='nw'>Workload</th>" in text and "<th class='nw'>Started<br>(UTC)</th>" in text
    assert "th.nw" in text                                     # the class is styled in browsers too


def test_report_charts_are_drawn_at_their_size_in_front(qapp, qtbot, light_theme):
    from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

    from app.report.charts import front_tab_of, offscreen

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("a results page in front"), "Results")
    page = QWidget()
    chart = TimeSeriesChart("Rows per second", y_unit="rows/s")
    QVBoxLayout(page).addWidget(chart)
    tabs.addTab(page, "Live")
    offscreen(tabs, 700, 400)
    assert not chart.isVisible()
    front_tab_of(chart)
    assert tabs.currentIndex() == 1 and chart.isVisible() and chart.width() > 600


def test_rates_read_in_the_unit_that_keeps_them_at_one_or_more():
    from app.report.as_html import fmt_rate
    assert fmt_rate(12_800, "rows/s") == "12.8 k rows/s"          # never "0.0128 M rows/s"
    assert fmt_rate(2_100_000, "rows/s") == "2.1 M rows/s"
    assert fmt_rate(0.5, "rows/s") == "0.5 rows/s"
    assert fmt_rate(1.5e9, "B/s") == "1.5 GB/s" and fmt_rate(999.0, "B/s") == "999 B/s"
