"""The results pane: the ranked list, the line above it when it is empty, match count, Show more, Group."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core.results import Hit
from .delegates import ContributionBarDelegate, HtmlDelegate
from .models import ResultsModel
from .search_worker import SearchOutcome
from .settings import AppSettings
from .texts import searched_as_text

RESULTS_K = 30  # one page of results; "Show more" adds as many
WELCOME = "Welcome!"


class ResultsPane(QWidget):
    """Shows a search outcome and keeps the selection on the same chunk across re-searches."""

    hit_selected = Signal(object)  # Hit | None: the selected result changed
    hit_activated = Signal()  # Enter or double click on a result
    more_requested = Signal()
    grouping_changed = Signal(bool)  # after the list was regrouped
    sort_changed = Signal(str)  # "relevance" or "newest" (params.SORTS): the search runs again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ResultsModel(self)
        self.welcome_query = ""  # the query the welcome line suggests: the line stays while its results show
        self.view = QTableView(self)
        view = self.view
        view.setObjectName("resultsView")
        view.setModel(self.model)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.verticalHeader().hide()
        view.setAlternatingRowColors(True)
        view.setTabKeyNavigation(False)  # Tab leaves the table for the next pane
        view.installEventFilter(self)  # Space toggles Use
        view.setWordWrap(True)
        lines = view.fontMetrics().lineSpacing()
        view.verticalHeader().setDefaultSectionSize(4 * lines + 16)  # the title, three of the passage
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        view.horizontalHeader().setSectionResizeMode(ResultsModel.COL_SNIPPET, QHeaderView.ResizeMode.Stretch)
        for col, width in (
            (ResultsModel.COL_USE, 36),
            (ResultsModel.COL_RANK, 34),
            (ResultsModel.COL_SCORE, 64),
            (ResultsModel.COL_SOURCE, 200),
            (ResultsModel.COL_BAR, 70),
        ):
            view.setColumnWidth(col, width)
        # The Result column shows the note and heading above the passage: the separate column (still in
        # the model, for copying and tests) would only repeat it.
        view.setColumnHidden(ResultsModel.COL_SOURCE, True)
        view.setItemDelegateForColumn(ResultsModel.COL_BAR, ContributionBarDelegate(self.model.max_bm25_score, self))
        view.setItemDelegateForColumn(ResultsModel.COL_SNIPPET, HtmlDelegate(self))
        view.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        view.activated.connect(self.hit_activated)

        self.empty_label = QLabel("", self)
        self.empty_label.setObjectName("emptyLabel")
        self.empty_label.setWordWrap(True)
        self.empty_label.setStyleSheet("color: #666; padding: 4px")
        self.searched_as_label = QLabel("", self)  # what the query's operators and filters did, in words
        self.searched_as_label.setObjectName("searchedAsLabel")
        self.searched_as_label.setWordWrap(True)
        self.searched_as_label.setTextFormat(Qt.TextFormat.PlainText)
        self.searched_as_label.hide()
        self.match_count_label = QLabel("", self)
        self.match_count_label.setObjectName("matchCountLabel")
        self.show_more_button = QPushButton(f"Show {RESULTS_K} more", self)
        self.show_more_button.setObjectName("showMoreButton")
        self.show_more_button.clicked.connect(self.more_requested)
        self.show_more_button.hide()
        self.group_check = QCheckBox("Group by note", self)
        self.group_check.setObjectName("groupByNoteCheck")
        self.group_check.setToolTip("Each note once, at its best chunk; its other matching chunks folded beneath it")
        self.group_check.toggled.connect(self._on_group_toggled)
        self.sort_combo = QComboBox(self)
        self.sort_combo.setObjectName("sortCombo")
        for label, sort in (("Best match", "relevance"), ("Newest first", "newest")):
            self.sort_combo.addItem(label, sort)
        self.sort_combo.setToolTip("Best match first, or the matches by their notes' dates, newest first")
        self.sort_combo.currentIndexChanged.connect(self._on_sort_combo_changed)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.searched_as_label)
        layout.addWidget(view)
        more = QHBoxLayout()
        more.addWidget(self.match_count_label, 1)
        more.addWidget(self.sort_combo)
        more.addWidget(self.group_check)
        more.addWidget(self.show_more_button)
        layout.addLayout(more)
        self.setMinimumWidth(420)  # the results keep room for their passage when the window shrinks

    def current_hit(self) -> Hit | None:
        index = self.view.currentIndex()
        return self.model.hit_at(index.row()) if index.isValid() else None

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.hit_selected.emit(self.model.hit_at(current.row()) if current.isValid() else None)

    def _select_key(self, key: object) -> None:
        """Select the row of the hit with `key` (the first row when it is gone); nothing when empty."""
        hits = self.model.hits
        row = next((i for i, h in enumerate(hits) if h.key == key), 0 if hits else -1)
        if row >= 0:
            self.view.selectRow(row)
        else:
            self.hit_selected.emit(None)

    def _on_group_toggled(self, grouped: bool) -> None:
        selected = self.current_hit()
        self.model.set_grouped(grouped)
        self._select_key(selected.key if selected else None)
        self.grouping_changed.emit(grouped)

    def show_outcome(self, outcome: SearchOutcome, empty_text: str) -> None:
        """Show the hits of `outcome` (or `empty_text` when there are none). A new question starts at
        the top with #1 selected (and forgets the passages ticked for the last one); the same question
        again (a refresh, another mode or k1, Show more) keeps the selected passage."""
        previous = self.current_hit()
        result = outcome.result
        new_question = self.model.result is None or self.model.result.query != result.query
        if new_question:
            self.model.forget_ticks()
        self.model.set_result(result, outcome.highlights, outcome.stale, outcome.findings, outcome.masked)
        if result.hits:
            welcome = self.empty_label.text().startswith(WELCOME) and result.query == self.welcome_query
            self.empty_label.setVisible(welcome)
        else:
            self.empty_label.setText(empty_text)
            self.empty_label.show()
        said = searched_as_text(result)
        self.searched_as_label.setText(said)
        self.searched_as_label.setVisible(bool(said))
        total = max(outcome.total, len(result.hits))
        self.match_count_label.setText(f"{len(result.hits)} of {total:,} matches" if result.hits else "")
        self.show_more_button.setVisible(total > len(result.hits))
        if new_question:
            self.view.scrollToTop()
        self._select_key(None if new_question or previous is None else previous.key)

    def welcome(self, text: str, query: str) -> None:
        """A first-run line above the results, kept while the suggested query's results are shown."""
        self.empty_label.setText(text)
        self.welcome_query = query
        self.empty_label.show()

    def clear(self) -> None:
        """An empty list and no lines: a new folder is being opened."""
        self.model.excluded.clear()
        self.model.clear()
        self.empty_label.clear()
        self.empty_label.hide()
        self.match_count_label.clear()
        self.searched_as_label.clear()
        self.searched_as_label.hide()
        self.show_more_button.hide()

    def walk(self, step: int) -> None:
        """Move the selection `step` rows, staying inside the list."""
        if self.model.rowCount():
            row = self.view.currentIndex().row()
            self.view.selectRow(max(0, min(self.model.rowCount() - 1, row + step)))

    def toggle_use(self) -> None:
        """Tick or untick the selected result's Use (whether it goes into the prompt)."""
        current = self.view.currentIndex()
        if not current.isValid():
            return
        index = self.model.index(current.row(), ResultsModel.COL_USE)
        checked = self.model.data(index, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
        new = Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked
        self.model.setData(index, new, Qt.ItemDataRole.CheckStateRole)

    @property
    def sort(self) -> str:
        """The order asked for: "relevance" or "newest"."""
        return str(self.sort_combo.currentData())

    def _on_sort_combo_changed(self, _index: int) -> None:
        self.sort_changed.emit(self.sort)

    def restore(self, settings: AppSettings) -> None:
        self.group_check.setChecked(settings.get("results/grouped", False, bool))
        found = self.sort_combo.findData(settings.get("results/sort", "relevance", str))
        self.sort_combo.setCurrentIndex(max(found, 0))

    def save(self, settings: AppSettings) -> None:
        settings.set("results/grouped", self.group_check.isChecked())
        settings.set("results/sort", self.sort)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (
            obj is self.view
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Space
            and self.view.currentIndex().isValid()
        ):
            self.toggle_use()
            return True
        return super().eventFilter(obj, event)
