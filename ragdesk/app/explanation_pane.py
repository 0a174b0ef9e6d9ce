"""The explanation pane: the selected chunk's text, its rank under each analyzer, the fused score's
parts, the per-term BM25 table with the formula filled in, and the compare-with-pinned table."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..core.explain import TermRow
from ..core.injection import Finding
from ..core.languages import dropped_text
from ..core.reader import IndexReader
from ..core.results import Hit, SearchResult
from . import texts
from .delegates import ShareBarDelegate
from .highlight import term_color
from .models import BreakdownModel

PIN_TEXT, UNPIN_TEXT = "Pin for compare", "Unpin"
SHARE_WIDTH = 72  # the share bar with "100.0%" on it
FIT_CANDIDATES = 3  # texts per column whose size the delegate is asked (the widest by font metrics)


class ExplanationPane(QWidget):
    """Shows one hit at a time (`show_hit`); holds the pinned hit that others are compared with."""

    pin_changed = Signal(object)  # Hit | None, after the user pinned or unpinned
    compare_shown = Signal()  # the compare table appeared: the window scrolls it into view
    secrets_reveal_requested = Signal(int)  # chunk id: the person asked to see the chunk's secrets

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit: Hit | None = None
        self.result: SearchResult | None = None
        self.pinned: Hit | None = None
        self.chunk_title = self._label("chunkTitle", texts.NO_SELECTION, wrap=True)
        self.reveal_button = QPushButton(texts.REVEAL_SECRETS, self)
        self.reveal_button.setObjectName("revealSecretsButton")
        self.reveal_button.setToolTip(texts.REVEAL_TIP)
        self.reveal_button.hide()
        self.reveal_button.clicked.connect(self._on_reveal_button_clicked)
        self.ranks_label = self._label("ranksLabel")
        self.fusion_label = self._label("fusionLabel", wrap=True)
        self.fusion_label.hide()
        self.chunk_view = QTextBrowser(self)
        self.chunk_view.setObjectName("chunkView")
        self.chunk_view.setMinimumHeight(70)
        self.breakdown_model = BreakdownModel(self)
        self.breakdown_view = QTableView(self)
        view = self.breakdown_view
        view.setTabKeyNavigation(False)
        view.setObjectName("breakdownView")
        view.setModel(self.breakdown_model)
        view.verticalHeader().hide()
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # the query words give way when the pane is narrow: the numbers and the share bar keep their width
        view.horizontalHeader().setSectionResizeMode(BreakdownModel.COL_WORDS, QHeaderView.ResizeMode.Stretch)
        view.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)  # "From qu…", not "m query wo"
        view.setColumnWidth(BreakdownModel.COL_SHARE, SHARE_WIDTH)
        view.setItemDelegateForColumn(BreakdownModel.COL_SHARE, ShareBarDelegate(self))
        view.selectionModel().currentRowChanged.connect(self._on_breakdown_row_changed)
        view.setMinimumHeight(120)
        self.dropped_label = self._label("droppedLabel", wrap=True)  # query words left out, and why
        self.dropped_label.hide()
        self.stats_label = self._label("statsLabel", wrap=True)  # unwrapped, it drew over the term table
        self.formula_label = self._label("formulaLabel", wrap=True)
        self.formula_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pin_button = QPushButton(PIN_TEXT, self)
        self.pin_button.setObjectName("pinButton")
        self.pin_button.setCheckable(True)
        self.pin_button.setToolTip("Pin this result, then select another to compare their breakdowns (Ctrl+P)")
        self.pin_button.clicked.connect(self._on_pin_clicked)
        self.copy_explanation_button = QPushButton("Copy explanation", self)
        self.copy_explanation_button.setObjectName("copyExplanationButton")
        self.compare_view = QTableWidget(0, 4, self)
        self.compare_view.setTabKeyNavigation(False)
        self.compare_view.setObjectName("compareView")
        self.compare_view.setHorizontalHeaderLabels(["Term", "Pinned", "Selected", "Selected − pinned"])
        self.compare_view.verticalHeader().hide()
        self.compare_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.compare_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.compare_view.setMinimumHeight(90)
        self.compare_view.hide()
        self.compare_label = self._label("compareLabel", wrap=True)
        self.compare_label.setTextFormat(Qt.TextFormat.RichText)  # escaped once, shown unescaped
        self.compare_label.hide()

        buttons = QHBoxLayout()
        buttons.addWidget(self.pin_button)
        buttons.addWidget(self.copy_explanation_button)
        buttons.addStretch(1)
        table_box = QWidget(self)
        tv = QVBoxLayout(table_box)
        tv.setContentsMargins(0, 0, 0, 0)
        for widget in (self.dropped_label, self.breakdown_view, self.stats_label, self.formula_label):
            tv.addWidget(widget)
        tv.addLayout(buttons)
        tv.addWidget(self.compare_label)
        tv.addWidget(self.compare_view)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("whySplitter")
        self.splitter.addWidget(self.chunk_view)
        self.splitter.addWidget(table_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        for widget in (self.chunk_title, self.reveal_button, self.ranks_label, self.fusion_label, self.splitter):
            layout.addWidget(widget)

    def _label(self, name: str, text: str = "", wrap: bool = False) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName(name)
        label.setWordWrap(wrap)
        return label

    def show_hit(
        self,
        hit: Hit | None,
        result: SearchResult | None = None,
        *,
        spans: list[tuple[int, int, str]] | None = None,
        findings: list[Finding] | None = None,
        stale: bool = False,
        context: list[str] | None = None,
        shown: Hit | None = None,
    ) -> None:
        """Show `hit` of `result` (None: the "select a result" line and empty tables); `shown` is the hit
        with its secrets masked, drawn instead of it until the person reveals them."""
        self.hit, self.result = hit, result
        self.ranks_label.clear()
        self.reveal_button.setVisible(hit is not None and shown is not None)
        dropped = dropped_text(result.left_out) if hit is not None and result is not None else ""
        self.dropped_label.setText(dropped)
        self.dropped_label.setVisible(bool(dropped))
        if hit is None:
            self.chunk_title.setText(texts.NO_SELECTION)
            self.chunk_view.clear()
            self.fusion_label.hide()
            self.breakdown_model.set_rows([])
            self.stats_label.clear()
            self.formula_label.clear()
            self._update_compare()
            return
        drawn = shown or hit
        self.chunk_title.setText(texts.chunk_title_html(drawn, stale))
        self.chunk_view.setHtml(texts.chunk_body_html(drawn.text, spans or [], findings or [], context or []))
        self.breakdown_model.set_rows(hit.explain)
        self._fit_columns()
        self.fusion_label.setVisible(hit.fusion is not None)
        if hit.fusion is not None:
            self.fusion_label.setText(texts.fusion_html(result.mode if result else "", hit))
        if hit.explain and result is not None:
            self.stats_label.setText(texts.stats_text(hit, result))
        best = max(range(len(hit.explain)), key=lambda i: hit.explain[i].contribution, default=-1)
        if best >= 0:
            self.breakdown_view.selectRow(best)
        self._update_compare()

    def _fit_columns(self) -> None:
        """The term table's columns as wide as `resizeColumnsToContents` makes them, asking the delegate
        only for each column's widest few texts: that asks the model every role of every cell (8 ms
        for a short query's 19 rows, 20-40 ms for a long one's 76, in the GUI thread)."""
        view, model = self.breakdown_view, self.breakdown_model
        header, metrics = view.horizontalHeader(), view.fontMetrics()
        grid = 1 if view.showGrid() else 0  # as QTableView.sizeHintForColumn counts it
        for col in range(model.columnCount()):
            if header.sectionResizeMode(col) == QHeaderView.ResizeMode.Stretch or col == model.COL_SHARE:
                continue
            advances = [metrics.horizontalAdvance(str(model.display(r, col))) for r in model.rows]
            widest = sorted(range(len(advances)), key=advances.__getitem__)[-FIT_CANDIDATES:]
            content = max((view.sizeHintForIndex(model.index(row, col)).width() + grid for row in widest), default=0)
            header.resizeSection(col, max(content, header.sectionSizeHint(col)))

    def _on_breakdown_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or current.row() >= len(self.breakdown_model.rows):
            self.formula_label.clear()
            return
        row: TermRow = self.breakdown_model.rows[current.row()]
        self.formula_label.setText(texts.formula_html(row, self.result.n_docs if self.result else 0))

    def ranks_pending(self) -> None:
        self.ranks_label.setText("Rank under each analyzer: computing…")

    def show_ranks(self, ranks: dict[str, int | None]) -> None:
        self.ranks_label.setText(texts.ranks_text(ranks))

    def show_ranks_unavailable(self, message: str) -> None:
        self.ranks_label.setText(f"Rank under each analyzer — not available: {message}")

    # ---- compare -----------------------------------------------------------------------------
    def toggle_pin(self) -> None:
        """Pin the shown result; unpin when the shown one is the pinned one."""
        hit = self.hit
        self.set_pinned(hit if hit is not None and (self.pinned is None or self.pinned.key != hit.key) else None)

    def _on_reveal_button_clicked(self) -> None:
        if self.hit is not None:
            self.secrets_reveal_requested.emit(self.hit.chunk_id)

    def _on_pin_clicked(self, checked: bool) -> None:
        self.set_pinned(self.hit if checked else None)

    def set_pinned(self, hit: Hit | None) -> None:
        self.pinned = hit
        self.pin_button.setChecked(hit is not None)
        self.pin_button.setText(UNPIN_TEXT if hit is not None else PIN_TEXT)
        self._update_compare()
        self.pin_changed.emit(hit)

    def update_pinned(self, score: float, rows: list[TermRow]) -> None:
        """The pinned chunk's score and rows under the current query (it need not be among the hits)."""
        if self.pinned is not None:
            self.pinned = replace(self.pinned, rank=0, score=score, explain=rows)
            self._update_compare()

    def follow_pin(self, library: IndexReader) -> str | None:
        """A refreshed index numbers chunks anew: the pin follows its passage (note path and span), or goes,
        and the line saying so is returned."""
        if self.pinned is None:
            return None
        chunk = library.chunk_at(self.pinned.path, self.pinned.span)
        if chunk is None:
            gone = self.pinned
            self.set_pinned(None)
            return f"Unpinned {gone.shown_path}: that passage changed on disk."
        self.pinned = replace(self.pinned, chunk_id=chunk)
        return None

    def _update_compare(self) -> None:
        hit, pinned = self.hit, self.pinned
        self.compare_label.setVisible(pinned is not None)
        comparing = pinned is not None and hit is not None and hit.chunk_id != pinned.chunk_id
        appeared = comparing and self.compare_view.isHidden()
        self.compare_view.setVisible(comparing)
        if pinned is None:
            return
        self.compare_label.setText(texts.compare_text(hit, pinned, self.result))
        if not comparing:
            return
        assert hit is not None
        rows = texts.compare_rows(hit, pinned)
        self.compare_view.setRowCount(len(rows))
        for i, (r, p) in enumerate(rows):
            values = [r.label, f"{p:.3f}", f"{r.contribution:.3f}", f"{r.contribution - p:+.3f}"]
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                if col == 0:
                    item.setBackground(term_color(r.term))
                self.compare_view.setItem(i, col, item)
        if appeared:
            self.compare_shown.emit()
