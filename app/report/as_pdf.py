"""The report's HTML on A4 pages, laid out and drawn by Qt (QTextDocument, QPdfWriter): no browser
engine needed.

    write_pdf(html, Path("report.pdf"), "Tickbench report")

The pages are laid out again until nothing a reader would see as broken is left: no table wider
than the page (a table whose words cannot fit is set in a smaller type), no heading ending a page
alone, no chart parted from its caption, and no table row cut by a page's foot (the table is split
before that row, under the same header) -- `pdf_document`.
"""
from __future__ import annotations

import importlib.metadata
import math
import re
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import (QColor, QFont, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextBlock,
                           QTextCursor, QTextDocument, QTextFormat, QTextFrame, QTextOption, QTextTable)

PDF_MARGIN_MM = 15
PDF_DPI = 300
FOOTER_PX = 24            # at the bottom of each PDF page: title and page number
MIN_TABLE_PERCENT = 97.0  # a table is narrowed to fit the page down to this share of it...
SMALLER_TABLE_TYPE = ("8pt", "7.5pt", "7pt", "6.5pt")   # ...then set in smaller type (cells: 8.5pt)


def write_pdf(document: str, path: Path, title: str = "Tickbench report") -> Path:
    """Lay the HTML out on A4 pages with Qt (QTextDocument) and write it with QPdfWriter.

    Pages are laid out and drawn here, at 96 pixels per inch of the printable area, with a
    footer of title and page number: QTextDocument.print_ would add 2 cm of margin of its own
    to the writer's and crop the charts."""
    writer = QPdfWriter(str(path))
    writer.setPageLayout(_page_layout())
    writer.setResolution(PDF_DPI)
    writer.setTitle(title)
    writer.setCreator(f"Tickbench {tickbench_version()}")
    width, body = pdf_page_size()
    height = body + FOOTER_PX
    text = pdf_document(document, width, body)
    pages = text.pageCount()
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write the PDF {path}: is the folder writable and the file not open elsewhere?")
    try:
        painter.scale(PDF_DPI / 96, PDF_DPI / 96)       # from document pixels to the writer's dots
        footer = QFont("DejaVu Sans")
        footer.setPixelSize(10)                          # document pixels, like the text above it
        for page in range(pages):
            if page:
                writer.newPage()
            top = page * text.pageSize().height()
            painter.save()
            painter.translate(0, -top)
            text.drawContents(painter, QRectF(0, top, width, text.pageSize().height()))
            painter.restore()
            painter.setFont(footer)
            painter.setPen(QColor("#666666"))
            painter.drawText(QRectF(0, height - FOOTER_PX + 6, width, FOOTER_PX - 6),
                             int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom),
                             f"{title} · page {page + 1} of {pages}")
    finally:
        painter.end()
    del writer                    # the file is complete once the writer is gone
    if not path.exists() or path.stat().st_size == 0:
        raise OSError(f"Qt did not write the PDF {path}")
    return path


def _page_layout() -> QPageLayout:
    margins = QMarginsF(PDF_MARGIN_MM, PDF_MARGIN_MM, PDF_MARGIN_MM, PDF_MARGIN_MM)
    return QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait, margins,
                       QPageLayout.Unit.Millimeter)


def pdf_page_size() -> tuple[float, float]:
    """Width and height in document pixels (96 per inch) of what a PDF page holds above its footer."""
    printable = _page_layout().paintRect(QPageLayout.Unit.Inch)
    return printable.width() * 96, printable.height() * 96 - FOOTER_PX


def pdf_document(document: str, width: float, height: float) -> QTextDocument:
    """The report's HTML laid out on pages of ``width`` x ``height`` document pixels, as the PDF
    draws it: no table wider than the page, headings kept with what follows them, charts with
    their captions, and no table row cut in two by the foot of a page (the table is split before
    that row instead)."""
    for _ in range(120):
        text = _laid_out(document, width, height)
        fitted = document
        for index, overflow in _wide_tables(text, width):
            fitted = _fitted_table(fitted, index, overflow)
        if fitted != document:
            document = fitted
            continue
        split = _first_split_row(text)
        if split is None:
            break
        document = _break_table(document, *split)
    return text


def _wide_tables(text: QTextDocument, width: float) -> list[tuple[int, float]]:
    """(index, its width over the page's) of each table wider than the page. Qt sizes a table's
    columns in whole pixels, so a table of 100 % with many columns can come out a pixel or two
    wider than the page; a word that cannot be broken widens it too."""
    layout = text.documentLayout()
    widths = [layout.frameBoundingRect(table).width() for table in _tables(text.rootFrame())]
    return [(index, laid_out / width) for index, laid_out in enumerate(widths) if laid_out > width + 0.5]


def _fitted_table(document: str, index: int, overflow: float) -> str:
    """The HTML with its ``index``-th table made narrower (``overflow``: its width over the
    page's): first its width as a share of the page, down to MIN_TABLE_PERCENT; a table that is
    still too wide is too wide for its words, and its type is made smaller, down to the last of
    SMALLER_TABLE_TYPE."""
    start, end = _table_span(document, index)
    table = document[start:end]
    opening = table[:table.index(">") + 1]
    given = re.search(r" width='([0-9.]+)%'", opening)
    percent = float(given.group(1)) if given else 100.0
    if percent > MIN_TABLE_PERCENT:
        narrower = max(min(percent - 0.3, math.floor(10 * percent / overflow) / 10), MIN_TABLE_PERCENT)
        sized = re.sub(r" width='[0-9.]+%'", "", opening).replace("<table", f"<table width='{narrower:.1f}%'", 1)
        return document[:start] + sized + table[len(opening):] + document[end:]
    now = re.search(r"<t[dh] style='font-size: ([0-9.]+pt)'", table)
    steps = list(SMALLER_TABLE_TYPE)
    position = steps.index(now.group(1)) + 1 if now else 0
    if position >= len(steps):
        return document                               # as small as type goes: the page shows the fault
    table = re.sub(r" style='font-size: [0-9.]+pt'", "", table)
    table = re.sub(r"<(t[dh])\b", rf"<\1 style='font-size: {steps[position]}'", table)
    return document[:start] + table + document[end:]


def _table_span(document: str, index: int) -> tuple[int, int]:
    """Where the ``index``-th <table> of the HTML starts and ends (the report nests no tables)."""
    start = [m.start() for m in re.finditer(r"<table\b", document)][index]
    return start, document.index("</table>", start) + len("</table>")


def _laid_out(document: str, width: float, height: float) -> QTextDocument:
    text = QTextDocument()
    text.setDefaultFont(QFont("DejaVu Sans", 9))
    text.setDocumentMargin(0)
    text.setPageSize(QSizeF(width, height))
    # words stay whole: a table too narrow for a word is a layout to fix, not a word to cut
    option = text.defaultTextOption()
    option.setWrapMode(QTextOption.WrapMode.WordWrap)
    text.setDefaultTextOption(option)
    text.setHtml(document)
    _keep_with_next(text)
    return text


def _keep_with_next(text: QTextDocument) -> None:
    """Start a page before a heading that would end a page alone (its table or text on the next),
    and before a chart whose caption would go to the next page. QTextDocument has no
    'page-break-after: avoid': this moves such blocks one at a time, laying the pages out again."""
    layout = text.documentLayout()
    page = text.pageSize().height()
    for _ in range(200):                                   # each pass moves one block
        text.pageCount()                                   # lays the whole document out again
        block = text.begin()
        while block.isValid():
            following = block.next()
            if following.isValid() and _keeps_with(block, following) and \
                    block.blockFormat().pageBreakPolicy() == QTextFormat.PageBreakFlag.PageBreak_Auto:
                here, there = _drawn_top(layout, block), _drawn_top(layout, following)
                if _page_of(there, page) > _page_of(here, page) and here % page > 1:
                    # the headings right above go with it ("Charts" over its first chart)
                    first, above = block, block.previous()
                    while above.isValid() and above.blockFormat().headingLevel() > 0:
                        first, above = above, above.previous()
                    form = first.blockFormat()
                    form.setPageBreakPolicy(QTextFormat.PageBreakFlag.PageBreak_AlwaysBefore)
                    QTextCursor(first).setBlockFormat(form)
                    break
            block = following
        else:
            return


def _tables(frame: QTextFrame) -> Iterable[QTextTable]:
    """The document's tables in document order (one per <table> of the HTML)."""
    for child in frame.childFrames():
        if isinstance(child, QTextTable):
            yield child
        yield from _tables(child)


def _first_split_row(text: QTextDocument) -> tuple[int, int] | None:
    """(table index, row) of the first body row whose cells start on one page and end on the next.
    QTextDocument moves a row to the next page only when none of its text fits, so a row of
    several lines at the foot of a page is cut in two."""
    layout = text.documentLayout()
    page = text.pageSize().height()
    for index, table in enumerate(_tables(text.rootFrame())):
        for row in range(table.format().headerRowCount(), table.rows()):
            tops, bottoms = [], []
            for column in range(table.columns()):
                cell = table.cellAt(row, column)
                tops.append(_drawn_top(layout, cell.firstCursorPosition().block()))
                bottoms.append(layout.blockBoundingRect(cell.lastCursorPosition().block()).bottom())
            top, bottom = min(tops), max(bottoms)
            if _page_of(top, page) != _page_of(bottom - 2, page) and bottom - top < page / 2 and row > 0:
                return index, row, _column_shares(table, layout)
    return None


def _column_shares(table: QTextTable, layout) -> list[float]:
    """Each column's share of the table's width as laid out, so both parts of a split table keep
    the same columns (QTextDocument would size each part from its own rows)."""
    lefts = [layout.blockBoundingRect(table.cellAt(0, c).firstCursorPosition().block()).left()
             for c in range(table.columns())]
    frame = layout.frameBoundingRect(table)
    edges = [*lefts, frame.right()]
    total = max(frame.width(), 1.0)
    return [max(edges[i + 1] - edges[i], 0.0) / total for i in range(len(lefts))]


def _break_table(document: str, index: int, row: int, shares: list[float]) -> str:
    """The HTML with its ``index``-th table split before body row ``row`` (counting header rows),
    the second part on a new page under the same header, both with the columns of the whole."""
    start, end = _table_span(document, index)
    table = document[start:end]
    opening = table[:table.index(">") + 1]
    head = re.search(r"<thead>.*?</thead>", table, flags=re.S)
    header = head.group(0) if head else ""
    rows = re.findall(r"<tr>.*?</tr>", table[head.end() if head else 0:], flags=re.S)
    cut = row - (1 if head else 0)
    if cut == 0 and "page-break-before" not in opening:    # its first row: the whole table to the next page
        heading = max(document.rfind("<h2", 0, start), document.rfind("<h3", 0, start))
        if heading >= 0 and start - heading < 800 and "page-break-before" not in document[heading:heading + 80]:
            # with the heading (and short text) over it, which must not end a page alone
            return document[:heading + 3] + " style='page-break-before: always'" + document[heading + 3:]
        return document[:start] + table.replace("<table", "<table style='page-break-before: always'", 1) + \
            document[end:]
    if not 0 < cut < len(rows):
        return document
    if header:
        header = _with_widths(header, "th", shares)
    else:                                   # no header: the first row of each part sets the columns
        rows[0], rows[cut] = _with_widths(rows[0], "td", shares), _with_widths(rows[cut], "td", shares)
    second = opening.replace(" style='page-break-before: always'", "").replace(
        "<table", "<table style='page-break-before: always'", 1)
    parts = (f"{opening}{header}<tbody>{''.join(rows[:cut])}</tbody></table>"
             f"{second}{header}<tbody>{''.join(rows[cut:])}</tbody></table>")
    return document[:start] + parts + document[end:]


def _with_widths(row: str, tag: str, shares: list[float]) -> str:
    """Each ``tag`` cell of ``row`` given its column's width in percent."""
    widths = iter(shares)
    row = re.sub(r" width='[0-9.]+%'", "", row)             # a part split again: its widths anew

    def sized(cell: re.Match) -> str:
        # rounded down: widths rounded to nearest could add up past 100 % and widen the table
        share = next(widths, None)
        return cell.group(0) if share is None else f"{cell.group(0)} width='{math.floor(1000 * share) / 10:.1f}%'"

    return re.sub(rf"<{tag}\b", sized, row)


def _page_of(y: float, page: float) -> int:
    """The page a point is drawn on; a line at 0.04 px above a page's foot is drawn on the next."""
    return int((y + 1) // page)


def _drawn_top(layout, block: QTextBlock) -> float:
    """Where a block's first line is drawn: a line that did not fit at the foot of a page (a chart)
    is moved to the next one inside its block, below the block's own top."""
    top = layout.blockBoundingRect(block).top()
    lines = block.layout()
    return top + (lines.lineAt(0).y() if lines is not None and lines.lineCount() else 0.0)


def _keeps_with(block: QTextBlock, following: QTextBlock) -> bool:
    """A heading keeps with the block after it; a chart with its caption (a paragraph, not a heading
    nor another chart)."""
    if block.blockFormat().headingLevel() > 0:
        return True
    return _is_image(block) and not _is_image(following) and following.blockFormat().headingLevel() == 0 \
        and following.text().strip() != ""


def _is_image(block: QTextBlock) -> bool:
    it = block.begin()
    while not it.atEnd():
        if it.fragment().charFormat().isImageFormat():
            return True
        it += 1
    return False


def tickbench_version() -> str:
    try:
        return importlib.metadata.version("tickbench")
    except importlib.metadata.PackageNotFoundError:
        return "(source tree)"
