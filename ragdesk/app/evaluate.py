"""The Evaluate dialog: the experiments of core.evaluate on a questions file, as tables and charts.

Compare analyzers (Hit@k and MRR, bars of Hit@5), the chunk-size experiment in a 320-word budget (a curve)
and a k1 x b grid (a heat map of MRR), all drawn with QPainter. Each run is a child process
(core.jobs.eval_job: the chunk experiment builds ten indexes, CPU-bound Python that must not hold
the window's GIL), watched by a worker thread that relays progress; results export to CSV or JSON.
"""

from __future__ import annotations

import csv
import json
import os
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QThread, Signal, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.evaluate import Question, QuestionsError, load_questions
from ..core.jobs import EvalDone, EvalJob, EvalProgress, Failed, eval_job
from ..core.params import SearchParams
from ..core.reader import IndexReader
from .child_process import describe, run_in_child

EXPERIMENTS = {  # combo text -> experiment key
    "Compare analyzers": "analyzers",
    "Chunk size in a 320-word budget": "chunks",
    "k1 × b grid (MRR)": "params",
}


class EvalWorker(QObject):
    """Runs one experiment of core.evaluate in a child process; reports progress as questions done of the total."""

    progress_changed = Signal(int, int)
    evaluation_finished = Signal(str, object)  # experiment key, list of row dicts
    evaluation_failed = Signal(object)  # the exception (QuestionsError, BuildProcessDied, ...)

    def __init__(self) -> None:
        super().__init__()
        self.cancel = threading.Event()

    @Slot(str, object, object, object)
    def run(self, key: str, library: IndexReader, questions: list[Question], params: SearchParams) -> None:
        job = EvalJob(key, str(library.folder), str(library.root), questions, params, os.getpid())

        def relay(msg: object) -> bool:
            if isinstance(msg, EvalProgress):
                self.progress_changed.emit(msg.done, msg.total)
                return False
            if isinstance(msg, EvalDone):
                self.evaluation_finished.emit(key, msg.rows)
            else:
                assert isinstance(msg, Failed)
                self.evaluation_failed.emit(msg.error)
            return True

        died = run_in_child(eval_job, job, self.cancel, relay, "evaluation")
        if died is not None:
            self.evaluation_failed.emit(died)


class _Chart(QWidget):
    """Base for the charts: rows in, a placeholder until there are any."""

    placeholder = ""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[dict[str, Any]] = []
        self.setMinimumHeight(170)

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        painter.setPen(self.palette().text().color())
        if not self.rows:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.placeholder)
            return
        self.draw(painter)

    def draw(self, painter: QPainter) -> None:
        raise NotImplementedError


class HitChart(_Chart):
    """Bars of Hit@5 per analyzer (all questions)."""

    placeholder = "Hit@5 per analyzer appears here"

    def draw(self, painter: QPainter) -> None:
        values = [(r["analyzer"], r["hit@5"]) for r in self.rows if r.get("kind") == "all"]
        label_w, pad = 90, 6
        bar_h = max(12, (self.height() - pad * (len(values) + 1)) // max(len(values), 1))
        for i, (name, value) in enumerate(values):
            y = pad + i * (bar_h + pad)
            right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(QRectF(0, y, label_w - 6, bar_h), right, name)
            width = (self.width() - label_w - 60) * value
            painter.fillRect(QRectF(label_w, y, width, bar_h), QColor("#8ecae6"))
            painter.drawText(QRectF(label_w + width + 4, y, 56, bar_h), Qt.AlignmentFlag.AlignVCenter, f"{value:.2f}")


class ChunkCurve(_Chart):
    """Share of answers reaching the context per chunk size: one line without overlap, one with."""

    placeholder = "Answer-in-context per chunk size appears here"
    COLORS = {False: QColor("#219ebc"), True: QColor("#fb8500")}

    def _frame(self) -> tuple[QRectF, dict[int, float]]:
        """The plot area and the x of each chunk size (spread evenly: the sizes double each step)."""
        area = QRectF(60, 22, self.width() - 120, self.height() - 50)  # room for the end labels
        sizes = sorted({r["chunk_words"] for r in self.rows})
        step = area.width() / max(len(sizes) - 1, 1)
        return area, {size: area.left() + i * step for i, size in enumerate(sizes)}

    def points(self) -> dict[bool, list[QPointF]]:
        """Plot coordinates of each line, keyed by 'has overlap'."""
        area, xs = self._frame()
        lines: dict[bool, list[QPointF]] = {False: [], True: []}
        for r in self.rows:
            y = area.bottom() - area.height() * r["answer_in_context"]
            lines[r["overlap"] > 0].append(QPointF(xs[r["chunk_words"]], y))
        return lines

    def draw(self, painter: QPainter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        area, xs = self._frame()
        painter.drawLine(area.bottomLeft(), area.bottomRight())
        painter.drawLine(area.topLeft(), area.bottomLeft())
        for v in (0.0, 0.5, 1.0):
            y = area.bottom() - area.height() * v
            painter.drawText(QRectF(0, y - 8, area.left() - 6, 16), Qt.AlignmentFlag.AlignRight, f"{v:.1f}")
        for r in self.rows:
            if not r["overlap"]:
                label = f"{r['chunk_words']} w × {r['chunks_in_budget']}"
                x = xs[r["chunk_words"]]
                painter.drawText(QRectF(x - 45, area.bottom() + 4, 90, 18), Qt.AlignmentFlag.AlignHCenter, label)
        painter.drawText(
            QRectF(area.left(), 0, area.width(), 18), 0, "answer in context: blue no overlap, orange ¼ overlap"
        )
        for overlapped, pts in self.points().items():
            painter.setPen(QPen(self.COLORS[overlapped], 2))
            for a, c in zip(pts, pts[1:]):
                painter.drawLine(a, c)
            for pt in pts:
                painter.drawEllipse(pt, 3, 3)


class HeatMap(_Chart):
    """MRR per (k1, b) cell, darker is better; the best cell is outlined."""

    placeholder = "MRR over k1 × b appears here"

    def cells(self) -> tuple[list[float], list[float], dict[tuple[float, float], float]]:
        k1s = sorted({r["k1"] for r in self.rows})
        bs = sorted({r["b"] for r in self.rows})
        return k1s, bs, {(r["k1"], r["b"]): r["mrr"] for r in self.rows}

    def draw(self, painter: QPainter) -> None:
        k1s, bs, mrr = self.cells()
        left, top = 52, 22
        w = (self.width() - left - 8) / len(bs)
        h = (self.height() - top - 8) / len(k1s)
        lo, hi = min(mrr.values()), max(mrr.values())
        best = max(mrr, key=lambda c: mrr[c])
        painter.drawText(QRectF(0, 0, left, top), Qt.AlignmentFlag.AlignCenter, "k1 \\ b")
        for j, b in enumerate(bs):
            painter.drawText(QRectF(left + j * w, 0, w, top), Qt.AlignmentFlag.AlignCenter, f"{b:g}")
        for i, k1 in enumerate(k1s):
            painter.drawText(QRectF(0, top + i * h, left - 6, h), Qt.AlignmentFlag.AlignCenter, f"{k1:g}")
            for j, b in enumerate(bs):
                value = mrr.get((k1, b))
                if value is None:
                    continue
                t = (value - lo) / (hi - lo) if hi > lo else 1.0
                rect = QRectF(left + j * w, top + i * h, w - 2, h - 2)
                painter.fillRect(rect, QColor.fromRgbF(1 - 0.8 * t, 1 - 0.45 * t, 1 - 0.2 * t))
                painter.setPen(QColor("black") if t < 0.6 else QColor("white"))
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"{value:.3f}")
                if (k1, b) == best:
                    painter.setPen(QPen(QColor("#fb8500"), 3))
                    painter.drawRect(rect)


class EvaluateDialog(QDialog):
    """Pick a questions file and an experiment, run it on the open folder, chart and export it."""

    _run_requested = Signal(str, object, object, object)
    evaluation_shown = Signal()  # the table and chart show a finished (or cancelled) run

    def __init__(self, library: IndexReader, params: SearchParams, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Evaluate retrieval on your questions")
        self.setObjectName("evaluateDialog")
        self.library, self.params = library, params
        self.rows: list[dict[str, Any]] = []
        self.experiment = ""
        layout = QVBoxLayout(self)
        intro = QLabel(
            "A questions file has one JSON object per line (or CSV columns): id, question, expected (the note "
            "that answers it, relative to the folder), optionally snippet, lines, also_ok and kind.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        pick = QHBoxLayout()
        self.path_edit = QLineEdit(self)
        self.path_edit.setObjectName("questionsPath")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._on_browse_clicked)
        self.experiment_combo = QComboBox(self)
        self.experiment_combo.setObjectName("experimentCombo")
        for text, key in EXPERIMENTS.items():
            self.experiment_combo.addItem(text, key)
        self.run_button = QPushButton("Run", self)
        self.run_button.setObjectName("runEvaluationButton")
        self.run_button.clicked.connect(self.start)
        pick.addWidget(self.path_edit, 1)
        pick.addWidget(browse)
        pick.addWidget(self.experiment_combo)
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
        self.table = QTableWidget(0, 0, self)
        self.table.setObjectName("evaluationTable")
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout.addWidget(self.table, 1)
        self.chart = HitChart(self)
        self.curve = ChunkCurve(self)
        self.heatmap = HeatMap(self)
        self.charts = QStackedWidget(self)
        for key, widget in (("analyzers", self.chart), ("chunks", self.curve), ("params", self.heatmap)):
            widget.setObjectName(f"{key}Chart")
            self.charts.addWidget(widget)
        self.experiment_combo.currentIndexChanged.connect(self.charts.setCurrentIndex)
        layout.addWidget(self.charts)
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
        # The thread lives as long as the dialog (`done` stops it): it only waits on the experiment's
        # process. Quitting it after each run raced the next Run, whose request could land in a
        # thread that was about to stop.
        self.thread.start()
        self.resize(860, 640)

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
        experiment = self.experiment_combo.currentData()
        self.message.setText(f"{self.experiment_combo.currentText()}: {len(questions)} questions…{note}")
        self.worker.cancel.clear()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._run_requested.emit(experiment, self.library, questions, self.params)

    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Questions file", "", "Questions (*.jsonl *.csv)")
        if path:
            self.path_edit.setText(path)

    def _on_progress_changed(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _on_evaluation_finished(self, experiment: str, rows: list[dict[str, Any]]) -> None:
        self.experiment, self.rows = experiment, rows
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        columns = self.columns()
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, key in enumerate(columns):
                value = row.get(key, "")
                text = f"{value:.3f}" if isinstance(value, float) and key not in ("k1", "b") else str(value)
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        chart = {"analyzers": self.chart, "chunks": self.curve, "params": self.heatmap}[experiment]
        chart.set_rows(rows)
        self.charts.setCurrentWidget(chart)
        self.csv_button.setEnabled(bool(rows))
        self.json_button.setEnabled(bool(rows))
        cancelled = self.worker.cancel.is_set()
        self.message.setText("Cancelled: what finished so far is shown." if cancelled else "Done.")
        self.evaluation_shown.emit()

    def columns(self) -> list[str]:
        """The table's columns: the keys of the rows, in order of first appearance."""
        return list(dict.fromkeys(k for row in self.rows for k in row))

    def _on_evaluation_failed(self, error: Exception) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.message.setText(f"Evaluation failed: {describe(error)}")

    def _on_export_clicked(self, kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"evaluation.{kind}")
        if path:
            self.export(Path(path), kind)

    def export(self, path: Path, kind: str) -> None:
        """Write the rows as CSV (the table's columns) or JSON (with the experiment's name)."""
        if kind == "json":
            path.write_text(json.dumps({"experiment": self.experiment, "rows": self.rows}, indent=2), encoding="utf-8")
            return
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=self.columns())
            writer.writeheader()
            writer.writerows(self.rows)

    def done(self, result: int) -> None:
        self.worker.cancel.set()
        self.thread.quit()
        self.thread.wait()
        super().done(result)
