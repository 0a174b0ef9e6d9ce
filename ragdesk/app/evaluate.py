"""The Evaluate dialog: Hit@k and MRR of each analyzer on a questions file, as a table and a chart.

Evaluation runs on a worker thread (progress, cancel); results export to CSV or JSON.
"""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRectF, Qt, QThread, Signal, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.analyzers import ANALYZERS, AnalyzerConfig
from ..core.evaluate import HIT_KS, Question, QuestionsError, evaluate, load_questions
from ..core.library import Library

COLUMNS = ("analyzer", "kind", "n", *(f"hit@{k}" for k in HIT_KS), "mrr")


class EvalWorker(QObject):
    """Evaluates every analyzer in turn; reports progress as questions done of the total."""

    progress_changed = Signal(int, int)
    evaluation_finished = Signal(object)  # list of row dicts
    evaluation_failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.cancel = threading.Event()

    @Slot(object, object, object, float, float)
    def run(self, library: Library, questions: list[Question], base: AnalyzerConfig, k1: float, b: float) -> None:
        rows: list[dict[str, Any]] = []
        total = len(questions) * len(ANALYZERS)
        try:
            for i, name in enumerate(ANALYZERS):
                report = evaluate(
                    library,
                    questions,
                    base.with_name(name),
                    k1,
                    b,
                    progress=lambda done, _n, i=i: self.progress_changed.emit(i * len(questions) + done, total),
                    cancelled=self.cancel.is_set,
                )
                if self.cancel.is_set():
                    break
                rows.append({"analyzer": name, "kind": "all", **report.metrics()})
                rows += [{"analyzer": name, "kind": kind, **report.metrics(kind)} for kind in report.kinds()]
        except Exception as exc:  # shown in the dialog; the window carries on
            self.evaluation_failed.emit(f"{type(exc).__name__}: {exc}")
            return
        self.evaluation_finished.emit(rows)


class HitChart(QWidget):
    """Bars of Hit@5 per analyzer (all questions), drawn with QPainter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: list[tuple[str, float]] = []
        self.setMinimumHeight(150)

    def set_values(self, values: list[tuple[str, float]]) -> None:
        self.values = values
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        if not self.values:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Hit@5 per analyzer appears here")
            return
        label_w, pad = 90, 6
        bar_h = max(12, (self.height() - pad * (len(self.values) + 1)) // len(self.values))
        for i, (name, value) in enumerate(self.values):
            y = pad + i * (bar_h + pad)
            painter.drawText(
                QRectF(0, y, label_w - 6, bar_h), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, name
            )
            width = (self.width() - label_w - 60) * value
            painter.fillRect(QRectF(label_w, y, width, bar_h), QColor("#8ecae6"))
            painter.drawText(QRectF(label_w + width + 4, y, 56, bar_h), Qt.AlignmentFlag.AlignVCenter, f"{value:.2f}")


class EvaluateDialog(QDialog):
    """Pick a questions file, compare the analyzers on the open folder, export the table."""

    _run_requested = Signal(object, object, object, float, float)
    evaluation_shown = Signal()  # the table and chart show a finished (or cancelled) run

    def __init__(
        self, library: Library, analyzer: AnalyzerConfig, k1: float, b: float, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Evaluate retrieval on your questions")
        self.setObjectName("evaluateDialog")
        self.library, self.analyzer, self.k1, self.b = library, analyzer, k1, b
        self.rows: list[dict[str, Any]] = []
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel(
                "A questions file has one JSON object per line (or CSV columns): id, question, expected (the note "
                "that answers it, relative to the folder), optionally snippet, lines, also_ok and kind."
            )
        )
        pick = QHBoxLayout()
        self.path_edit = QLineEdit(self)
        self.path_edit.setObjectName("questionsPath")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._on_browse_clicked)
        self.run_button = QPushButton("Compare analyzers", self)
        self.run_button.setObjectName("runEvaluationButton")
        self.run_button.clicked.connect(self.start)
        pick.addWidget(self.path_edit, 1)
        pick.addWidget(browse)
        pick.addWidget(self.run_button)
        layout.addLayout(pick)
        self.progress = QProgressBar(self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.message = QLabel("", self)
        self.message.setObjectName("evaluationMessage")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("evaluationTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout.addWidget(self.table, 1)
        self.chart = HitChart(self)
        layout.addWidget(self.chart)
        exports = QHBoxLayout()
        self.csv_button = QPushButton("Export CSV…", self)
        self.json_button = QPushButton("Export JSON…", self)
        for button, kind in ((self.csv_button, "csv"), (self.json_button, "json")):
            button.setEnabled(False)
            button.clicked.connect(lambda _=False, k=kind: self._on_export_clicked(k))
            exports.addWidget(button)
        exports.addStretch(1)
        layout.addLayout(exports)
        self.thread = QThread(self)
        self.worker = EvalWorker()
        self.worker.moveToThread(self.thread)
        self._run_requested.connect(self.worker.run)
        self.worker.progress_changed.connect(self._on_progress_changed)
        self.worker.evaluation_finished.connect(self._on_evaluation_finished)
        self.worker.evaluation_failed.connect(self._on_evaluation_failed)
        self.cancel_button.clicked.connect(self.worker.cancel.set)
        # The thread runs only while an evaluation does, so closing the dialog never strands it.
        self.worker.evaluation_finished.connect(self.thread.quit)
        self.worker.evaluation_failed.connect(self.thread.quit)
        self.resize(820, 560)

    def start(self) -> None:
        try:
            questions = load_questions(self.path_edit.text().strip())
        except QuestionsError as exc:
            self.message.setText(str(exc))
            return
        missing = sorted({q.expected for q in questions} - set(self.library.note_paths))
        note = (
            f" {len(missing)} expected note(s) not in this folder (not counted): {', '.join(missing[:3])}"
            if missing
            else ""
        )
        self.message.setText(f"Evaluating {len(questions)} questions with {len(ANALYZERS)} analyzers…{note}")
        self.worker.cancel.clear()
        self.thread.start()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._run_requested.emit(self.library, questions, self.analyzer, self.k1, self.b)

    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Questions file", "", "Questions (*.jsonl *.csv)")
        if path:
            self.path_edit.setText(path)

    def _on_progress_changed(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _on_evaluation_finished(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, key in enumerate(COLUMNS):
                value = row.get(key, "")
                text = f"{value:.3f}" if isinstance(value, float) else str(int(value) if key == "n" else value)
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.chart.set_values([(row["analyzer"], row["hit@5"]) for row in rows if row["kind"] == "all"])
        self.csv_button.setEnabled(bool(rows))
        self.json_button.setEnabled(bool(rows))
        cancelled = self.worker.cancel.is_set()
        self.message.setText("Cancelled: analyzers finished so far are shown." if cancelled else "Done.")
        self.evaluation_shown.emit()

    def _on_evaluation_failed(self, message: str) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.message.setText(f"Evaluation failed: {message}")

    def _on_export_clicked(self, kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"evaluation.{kind}")
        if path:
            self.export(Path(path), kind)

    def export(self, path: Path, kind: str) -> None:
        """Write the table as CSV (one row per analyzer and kind) or JSON."""
        if kind == "json":
            path.write_text(json.dumps({"rows": self.rows}, indent=2), encoding="utf-8")
            return
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
            writer.writeheader()
            for row in self.rows:
                writer.writerow({k: row.get(k, "") for k in COLUMNS})

    def done(self, result: int) -> None:
        self.worker.cancel.set()
        self.thread.quit()
        self.thread.wait()
        super().done(result)
