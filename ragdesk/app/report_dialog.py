"""What was indexed: every file with its status, filterable, with totals and export (the status bar's
file count opens it; the same rows as `ragdesk index --report`)."""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

COLUMNS = ("path", "status", "reason", "chunks", "tokens", "pages", "indexed_at", "tried_at")
HEADERS = ("File", "Status", "Reason", "Chunks", "Tokens", "Pages", "Indexed", "Last tried")
STATUSES = ("indexed", "decoded", "skipped")
REASON_WIDTH = 280


def totals(rows: list[dict[str, Any]]) -> str:
    """One line: how many files of each status, chunks and tokens in all."""
    count = {s: sum(1 for r in rows if r["status"] == s) for s in STATUSES}
    chunks, tokens = sum(r["chunks"] for r in rows), sum(r["tokens"] for r in rows)
    return (
        f"{count['indexed']} indexed, {count['decoded']} decoded with a fallback, {count['skipped']} skipped · "
        f"{chunks:,} chunks, {tokens:,} tokens"
    )


def _cell(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key in ("indexed_at", "tried_at"):
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(value))
    return str(value)


class FileNameFirst(QStyledItemDelegate):
    """A path elided at its start, so a narrow column still shows the file name (the folder goes)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft


class IndexReportDialog(QDialog):
    """The index report as a sortable table; a status filter and a text filter; Export writes CSV."""

    def __init__(self, rows: list[dict[str, Any]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("What was indexed")
        self.setObjectName("indexReportDialog")
        self.rows = rows
        layout = QVBoxLayout(self)
        self.totals_label = QLabel(totals(rows), self)
        self.totals_label.setObjectName("reportTotals")
        filters = QHBoxLayout()
        self.status_combo = QComboBox(self)
        self.status_combo.setObjectName("reportStatusCombo")
        self.status_combo.addItem("all files", "")
        for status in STATUSES:
            self.status_combo.addItem(status, status)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("reportFilter")
        self.filter_edit.setPlaceholderText("filter by path or reason…")
        filters.addWidget(self.status_combo)
        filters.addWidget(self.filter_edit, 1)
        self.model = QStandardItemModel(len(rows), len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(HEADERS))
        for i, row in enumerate(rows):
            for j, key in enumerate(COLUMNS):
                item = QStandardItem(_cell(key, row[key]))
                if key in ("chunks", "tokens", "pages"):
                    if row[key] is not None:  # numbers sort as numbers
                        item.setData(int(row[key]), Qt.ItemDataRole.DisplayRole)
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setEditable(False)
                if key in ("path", "reason") and row[key]:
                    item.setToolTip(str(row[key]))
                self.model.setItem(i, j, item)
        self.status_proxy = QSortFilterProxyModel(self)
        self.status_proxy.setSourceModel(self.model)
        self.status_proxy.setFilterKeyColumn(COLUMNS.index("status"))
        self.text_proxy = QSortFilterProxyModel(self)
        self.text_proxy.setSourceModel(self.status_proxy)
        self.text_proxy.setFilterKeyColumn(-1)  # any column: path or reason
        self.text_proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTableView(self)
        self.table.setObjectName("reportTable")
        self.table.setModel(self.text_proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setTabKeyNavigation(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setItemDelegateForColumn(0, FileNameFirst(self.table))
        self.table.resizeColumnsToContents()
        reason = COLUMNS.index("reason")  # long reasons are elided (whole in the tooltip), not the file names
        self.table.setColumnWidth(reason, min(self.table.columnWidth(reason), REASON_WIDTH))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = QPushButton("Export CSV…", self)
        self.export_button.setObjectName("reportExportButton")
        buttons.addButton(self.export_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.export_button.clicked.connect(self._on_export_clicked)
        self.status_combo.currentIndexChanged.connect(self._on_status_changed)
        self.filter_edit.textChanged.connect(self.text_proxy.setFilterFixedString)
        layout.addWidget(self.totals_label)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(900, 520)

    def _on_status_changed(self, _index: int) -> None:
        status = self.status_combo.currentData()
        self.status_proxy.setFilterRegularExpression(f"^{status}$" if status else "")

    def visible_rows(self) -> list[dict[str, Any]]:
        """The rows the filters let through, in the table's order."""
        out = []
        for r in range(self.text_proxy.rowCount()):
            source = self.status_proxy.mapToSource(self.text_proxy.mapToSource(self.text_proxy.index(r, 0)))
            out.append(self.rows[source.row()])
        return out

    def export_csv(self, path: str | Path) -> int:
        """Write the visible rows to `path`; returns how many."""
        rows = self.visible_rows()
        with open(path, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
            writer.writeheader()
            writer.writerows(rows)
        return len(rows)

    def _on_export_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the index report", "index-report.csv", "CSV (*.csv)")
        if path:
            n = self.export_csv(path)
            self.totals_label.setText(f"{totals(self.rows)} · exported {n} rows to {path}")
