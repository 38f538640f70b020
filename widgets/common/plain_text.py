"""Text from a file, a run or a server shown in Qt as written, never as markup.

Qt takes a label's text or a tooltip for HTML when it looks like HTML (``Qt.mightBeRichText``): a
run's name holding ``<img width=20000>`` drew a 20,000 px tooltip. Labels are set to plain text;
a tooltip has no such setting, so its text goes escaped into an explicit rich-text document.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from workloads.text import printable


def tooltip(text: str | None) -> str:
    """A tooltip showing ``text`` as written (its lines kept, control characters as escapes)."""
    if not text:
        return ""
    return "<qt>" + html.escape(printable(str(text))).replace("\n", "<br>") + "</qt>"


def plain_label(label: QLabel) -> QLabel:
    """``label`` showing its text as written, whatever it holds."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def tooltip_words(tip: str) -> str:
    """What a tooltip reads as (its text without the markup ``tooltip`` wrapped it in)."""
    from PySide6.QtGui import QTextDocumentFragment
    return QTextDocumentFragment.fromHtml(tip).toPlainText() if tip.startswith("<qt>") else tip
