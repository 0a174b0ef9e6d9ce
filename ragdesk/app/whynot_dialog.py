""" "Why not this note?" (Ctrl+J): pick the note you expected, see where it ranks and why not higher.

A keyboard-first picker over the notes' paths (type to filter, arrows, Enter), and the answer
beneath it: the note's best chunk's rank, its BM25 rows beside the top hit's, the query words that
vanished or occur in no note, and the score gap to the k-th result (computed by the search worker).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, QStringListModel, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.analyzers import fold_accents
from ..core.paths import shown
from ..core.whynot import WhyNot

COLUMNS = ("Term", "n_t", "idf", "f", "Contribution", "Top hit's")


def ranks_table(why: WhyNot) -> str:
    """WhyNot.rank_table as a small HTML table."""
    names, rows = why.rank_table()
    head = "".join(f"<th align='right'>&nbsp;{html.escape(n)}&nbsp;</th>" for n in names)
    body = "".join(
        f"<tr><td>{html.escape(label)}</td>" + "".join(f"<td align='right'>{v}</td>" for v in values) + "</tr>"
        for label, values in rows
    )
    return f"<table cellspacing='0' cellpadding='2'><tr><th></th>{head}</tr>{body}</table>"


def _folded(text: str) -> str:
    return fold_accents(text.casefold())


class FoldedFilter(QSortFilterProxyModel):
    """Rows whose text holds the typed text, case and accents aside ("recuperation" finds
    "Récupération de fichier"), as a person types a name they half remember."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._needle = ""
        self._folded: list[str] = []

    def setSourceModel(self, model: Any) -> None:
        super().setSourceModel(model)
        self._folded = [_folded(str(model.index(r, 0).data() or "")) for r in range(model.rowCount())]

    def set_needle(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt 6.9+; invalidateFilter is deprecated there
            self.beginFilterChange()
            self._needle = _folded(text)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._needle = _folded(text)
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        return self._needle in self._folded[source_row]


class WhyNotDialog(QDialog):
    """The picker and the explanation; `note_chosen(path)` asks the window to explain that note."""

    note_chosen = Signal(str)

    def __init__(self, paths: list[str], query: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whyNotDialog")
        self.setWindowTitle("Why not this note?")
        self.resize(760, 620)
        self._paths = paths
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Which note did you expect for “{query}”? Type part of its name or path.", self))
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("whyNotFilter")
        self.filter_edit.setPlaceholderText("filter notes…")
        self.model = QStringListModel([shown(p) for p in paths], self)
        self.proxy = FoldedFilter(self)
        self.proxy.setSourceModel(self.model)
        self.list_view = QListView(self)
        self.list_view.setObjectName("whyNotList")
        self.list_view.setModel(self.proxy)
        self.list_view.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.summary = QLabel("", self)
        self.summary.setObjectName("whyNotSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("whyNotTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setTabKeyNavigation(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.list_view, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 2)
        self.filter_edit.textChanged.connect(self._on_filter_edited)
        self.filter_edit.returnPressed.connect(self._on_filter_return_pressed)
        self.list_view.activated.connect(self._on_list_activated)
        self._on_filter_edited("")

    def _on_filter_edited(self, text: str) -> None:
        self.proxy.set_needle(text)
        if self.proxy.rowCount():
            self.list_view.setCurrentIndex(self.proxy.index(0, 0))

    def _on_filter_return_pressed(self) -> None:
        current = self.list_view.currentIndex()
        if current.isValid():
            self._on_list_activated(current)

    def keyPressEvent(self, event: Any) -> None:  # arrows in the filter walk the list
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.filter_edit.hasFocus():
            row = self.list_view.currentIndex().row() + (1 if event.key() == Qt.Key.Key_Down else -1)
            if 0 <= row < self.proxy.rowCount():
                self.list_view.setCurrentIndex(self.proxy.index(row, 0))
            return
        super().keyPressEvent(event)

    def _on_list_activated(self, index: QModelIndex) -> None:
        source = self.proxy.mapToSource(index)
        path = self._paths[source.row()]
        self.summary.setText(f"Explaining {shown(path)}…")
        self.note_chosen.emit(path)

    def show_answer(self, why: WhyNot) -> None:
        """Fill in the explanation the search worker computed: the answer in words, the three ranks
        beside the top hit's and the k-th's, the missing words, and the BM25 rows beside the top hit's."""
        lines = [f"<b>{html.escape(shown(why.path))}</b>: {html.escape(why.summary())}", ranks_table(why)]
        if why.missing_terms:
            lines.append("Missing: " + html.escape(", ".join(why.missing_terms)))
        self.summary.setText("<br>".join(lines))
        top = {r.label: r.contribution for r in why.top_terms}
        self.table.setRowCount(len(why.terms))
        for i, r in enumerate(why.terms):
            cells = (
                r.label,
                str(r.n_t),
                f"{r.idf:.3f}",
                str(r.f),
                f"{r.contribution:.3f}",
                f"{top.get(r.label, 0):.3f}",
            )
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, col, item)

    def show_error(self, error: Exception) -> None:
        self.summary.setText(str(error))
        self.table.setRowCount(0)
