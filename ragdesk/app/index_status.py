"""The status bar's index widget: what the open index holds (click: every file and why), and while a
build runs, its progress and a Cancel button."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from ..core.jobs import EmbeddingProgress, Progress
from ..core.reader import IndexReader
from . import texts


class IndexStatus(QWidget):
    """Three states: no folder, building (progress + Cancel), and the open index's summary."""

    report_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("buildProgress")
        self.progress.setMaximumWidth(260)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName("cancelBuildButton")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.cancel_button.hide()
        self.index_button = QPushButton("No folder open", self)
        self.index_button.setObjectName("indexStatusButton")
        self.index_button.setFlat(True)
        self.index_button.clicked.connect(self.report_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.progress, self.cancel_button, self.index_button):
            layout.addWidget(widget)

    def show_building(self) -> None:
        """A build started: a busy bar until its first progress message."""
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.show()

    def show_progress(self, msg: Progress | EmbeddingProgress) -> str:
        """Show a build's progress; returns the status line to show beside it ("" for none)."""
        self.progress.show()
        self.cancel_button.show()
        if isinstance(msg, EmbeddingProgress):  # the build process is computing the meaning index
            self._set(msg.embedded + msg.done, msg.chunks)
            self.progress.setFormat(f"meaning {msg.embedded + msg.done:,}/{msg.chunks:,}")
            return texts.meaning_progress_text(msg)
        self._set(msg.done, msg.total)
        self.progress.setFormat(f"{msg.done}/{msg.total} files · {msg.chunks} chunks")
        # total 0: not started yet (e.g. waiting for another process's build of this folder)
        return (f"Indexing {msg.current}" if msg.total else msg.current) if msg.current else ""

    def _set(self, value: int, maximum: int) -> None:
        """Move the bar without QProgressBar's synchronous repaint (measured: 50-60 ms a call offscreen,
        the longest stall of a refresh); it is painted with the window's next frame instead."""
        self.progress.setUpdatesEnabled(False)
        self.progress.setRange(0, max(maximum, 1))
        self.progress.setValue(value)
        self.progress.setUpdatesEnabled(True)  # schedules one ordinary update

    def show_idle(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()

    def show_index(self, library: IndexReader) -> None:
        self.index_button.setText(texts.index_status_text(library))
        self.index_button.setToolTip("Click to see every file: indexed, decoded with a fallback, or skipped and why")
