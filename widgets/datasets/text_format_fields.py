"""TextFormatFields: how a CSV writes its values, as a row of small fields (the time format, the decimal
mark, the unit of integer times, the quote character, the encoding) giving a
``workloads.datasets.text_format.TextFormat``; ``changed`` when the user edits one."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from workloads.datasets.text_format import EPOCH_WORDS, TextFormat


class TextFormatFields(QWidget):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.time_format = QLineEdit(objectName="time_format_edit")
        self.time_format.setPlaceholderText("ISO 8601")
        self.time_format.setToolTip("The timestamps' format in strptime's fields, e.g. %d/%m/%Y %H:%M:%S "
                                    "(a fraction of a second: end with .%f); empty for ISO 8601")
        self.decimal = QComboBox(objectName="decimal_combo")
        self.decimal.addItem("1.5", ".")
        self.decimal.addItem("1,5", ",")
        self.decimal.setToolTip("The decimal mark of the numbers")
        self.epoch = QComboBox(objectName="epoch_combo")
        self.epoch.addItem("from their size", "")
        for unit, words in EPOCH_WORDS.items():
            self.epoch.addItem(words, unit)
        self.epoch.setToolTip("The unit of times written as integers since 1970 (epoch times)")
        self.quote = QLineEdit('"', objectName="quote_edit", maxLength=1)
        self.quote.setFixedWidth(32)
        self.quote.setToolTip("The quote character; empty when the file quotes nothing")
        self.encoding = QLineEdit("utf-8", objectName="encoding_edit")
        self.encoding.setFixedWidth(80)
        self.encoding.setToolTip("The file's encoding, e.g. utf-8, latin-1, cp1252")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for label, field in (("Times:", self.time_format), ("Decimal:", self.decimal), ("Integer times:", self.epoch),
                             ("Quote:", self.quote), ("Encoding:", self.encoding)):
            row.addWidget(QLabel(label))
            row.addWidget(field, 1 if field is self.time_format else 0)
        for edit in (self.time_format, self.quote, self.encoding):
            edit.editingFinished.connect(self.changed)
        for combo in (self.decimal, self.epoch):
            combo.activated.connect(lambda _: self.changed.emit())

    def text_format(self) -> TextFormat:
        """The format as set; ``TextFormatError`` (a ValueError) naming a field that cannot be used."""
        return TextFormat(quote=self.quote.text(), encoding=self.encoding.text().strip() or "utf-8",
                          decimal=self.decimal.currentData(), time_format=self.time_format.text().strip(),
                          epoch=self.epoch.currentData())
