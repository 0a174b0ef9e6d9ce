"""The main window: search field, ranked results, why-it-ranked breakdown, and the prompt preview."""

from __future__ import annotations

import html
import os
import shlex
import time
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QModelIndex, QObject, QProcess, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QColor,
    QDesktopServices,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QTextEdit,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from ..core import store
from ..core.analyzers import ANALYZERS, AnalyzerConfig
from ..core.bm25 import DEFAULT_B, DEFAULT_K1
from ..core.dense import MODES, dense_available, embedder_name
from ..core.explain import TermRow, explanation_text
from ..core.jobs import EmbeddingProgress, Progress
from ..core.params import IndexSettings
from ..core.paths import shown
from ..core.prompt import FORMATS, ORDERS, Excerpt, Prompt, build_prompt
from ..core.reader import IndexReader
from ..core.results import Hit
from ..core.secrets import REDACTION_MARK, find_secrets
from ..core.store import IndexDamaged
from .delegates import ContributionBarDelegate, HtmlDelegate, ShareBarDelegate, swatch
from .dialogs import AboutDialog, InstructionsDialog, SettingsDialog
from .evaluate import EvaluateDialog
from .models import BreakdownModel, ResultsModel, highlighted_html, term_color
from .report_dialog import IndexReportDialog
from .resources import app_icon, sample_notes_folder
from .settings import AppSettings
from .watcher import FolderWatcher
from .whynot_dialog import WhyNotDialog
from .workers import BuildOutcome, BuildRequest, Engine, SearchOutcome, SearchRequest, describe

SEARCH_DEBOUNCE_MS = 180
RESULTS_K = 30
WELCOME_QUERY = "how do I undo a commit"


def _fill(arg: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        arg = arg.replace(key, value)
    return arg


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class MainWindow(QMainWindow):
    """ragdesk's window. Core work runs in `Engine`'s threads; this class only shows and asks."""

    library_loaded = Signal(object)  # IndexReader, after the first build/open of a folder or a rebuild
    results_shown = Signal(object)  # SearchResult, after the results view was updated
    prompt_copied = Signal(str)  # the exact text put on the clipboard
    build_state_changed = Signal(str)  # "building", "built", "cancelled", "failed"

    def __init__(self, settings: AppSettings | None = None, index_dir: str | None = None) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.index_dir = index_dir
        self.folder: str | None = None
        self.library: IndexReader | None = None
        self.last_request: SearchRequest | None = None
        self.pinned: Hit | None = None
        self.prompt: Prompt | None = None
        self._pending_build: BuildRequest | None = None
        self._building_folder: str | None = None  # the folder of the build under way
        self.results_k = RESULTS_K  # how many results the list shows ("Show more" adds a page)
        self._verified_generation: Path | None = None  # the generation last checked after a damaged search
        self.watcher = FolderWatcher(self)
        self.watcher.folder_changed.connect(self._on_folder_changed)
        self.setWindowTitle("ragdesk")
        self.setWindowIcon(app_icon())
        self._build_ui()
        self._build_menus()
        # The worker threads start last, so a window that fails to build leaves no thread behind.
        self.engine = Engine(self)
        self.engine.builder.progress_changed.connect(self._on_progress_changed)
        self.engine.builder.index_opened.connect(self._on_index_opened)
        self.engine.builder.index_built.connect(self._on_index_built)
        self.engine.builder.build_failed.connect(self._on_build_failed)
        self.engine.builder.build_cancelled.connect(self._on_build_cancelled)
        self.engine.searcher.search_finished.connect(self._on_search_finished)
        self.engine.searcher.ranks_found.connect(self._on_ranks_found)
        self.engine.searcher.ranks_failed.connect(self._on_ranks_failed)
        self.engine.searcher.search_failed.connect(self._on_search_failed)
        self._restore_state()

    # ---- construction -------------------------------------------------------------------------
    def _build_ui(self) -> None:
        bar = QToolBar("Search", self)
        bar.setObjectName("searchToolBar")
        bar.setMovable(False)
        self.addToolBar(bar)
        self.search_field = QLineEdit(self)
        self.search_field.setObjectName("searchField")
        self.search_field.setPlaceholderText("Search your notes…  (Ctrl+L)")
        self.search_field.setClearButtonEnabled(True)
        self.search_field.installEventFilter(self)
        bar.addWidget(self.search_field)
        bar.addWidget(QLabel("  Analyzer "))
        self.analyzer_combo = QComboBox(self)
        self.analyzer_combo.setObjectName("analyzerCombo")
        self.analyzer_combo.addItems(list(ANALYZERS))
        self.analyzer_combo.setToolTip(
            "words: whole words · stems: first letters of each word (handles inflection) · "
            "trigrams: 3-letter pieces (handles typos) · combined: stems + 0.3 × trigrams (default)"
        )
        bar.addWidget(self.analyzer_combo)
        self.fold_accents_check = QCheckBox("Fold accents", self)
        self.fold_accents_check.setObjectName("foldAccentsCheck")
        self.fold_accents_check.setToolTip(
            "Match accented and plain letters alike (“zlutoucky” finds “žluťoučký”): for queries typed\n"
            "without diacritics. The first search with it on derives a folded index."
        )
        bar.addWidget(self.fold_accents_check)
        bar.addWidget(QLabel("  Mode "))
        self.mode_combo = QComboBox(self)
        self.mode_combo.setObjectName("modeCombo")
        self.mode_combo.addItems(list(MODES))
        if not dense_available(self.settings.embedder):
            hint = 'Dense and hybrid search need the optional extra: pip install "ragdesk[dense]"'
            for i in (1, 2):
                item = self.mode_combo.model().item(i)  # type: ignore[attr-defined]
                item.setEnabled(False)
                item.setToolTip(hint)
            self.mode_combo.setToolTip(hint)
        else:
            self.mode_combo.setToolTip("bm25: words · dense: meaning (embeddings) · hybrid: both, by rank fusion")
        bar.addWidget(self.mode_combo)
        self.k1_spin = self._param_spin(
            bar, "k1", "k1Spin", 5.0, 0.1, "Term-frequency saturation: higher lets repeated words count more"
        )
        self.b_spin = self._param_spin(
            bar, "b", "bSpin", 1.0, 0.05, "Length normalization: 0 ignores chunk length, 1 fully normalizes"
        )
        reset = QPushButton("Reset", self)
        reset.setObjectName("resetParamsButton")
        reset.setToolTip(f"Back to the default analyzer, accents as typed, BM25, k1 = {DEFAULT_K1}, b = {DEFAULT_B}")
        reset.clicked.connect(self._on_reset_clicked)
        bar.addWidget(reset)

        # Results
        self.results_model = ResultsModel(self)
        self.results_view = QTableView(self)
        self.results_view.setObjectName("resultsView")
        self.results_view.setModel(self.results_model)
        self.results_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.results_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results_view.verticalHeader().hide()
        self.results_view.setAlternatingRowColors(True)
        self.results_view.setTabKeyNavigation(False)  # Tab leaves the table for the next pane
        self.results_view.installEventFilter(self)  # Space toggles Use
        self.results_view.setWordWrap(True)
        lines = self.results_view.fontMetrics().lineSpacing()
        self.results_view.verticalHeader().setDefaultSectionSize(4 * lines + 16)  # the title, three of the passage
        self.results_view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.results_view.horizontalHeader()
        header.setSectionResizeMode(ResultsModel.COL_SNIPPET, QHeaderView.ResizeMode.Stretch)
        for col, width in (
            (ResultsModel.COL_USE, 36),
            (ResultsModel.COL_RANK, 34),
            (ResultsModel.COL_SCORE, 64),
            (ResultsModel.COL_SOURCE, 200),
            (ResultsModel.COL_BAR, 70),
        ):
            self.results_view.setColumnWidth(col, width)
        # The Result column shows the note and heading above the passage: the separate column (still in
        # the model, for copying and tests) would only repeat it.
        self.results_view.setColumnHidden(ResultsModel.COL_SOURCE, True)
        self.results_view.setItemDelegateForColumn(
            ResultsModel.COL_BAR,
            ContributionBarDelegate(self.results_model.max_bm25_score, self),
        )
        self.results_view.setItemDelegateForColumn(ResultsModel.COL_SNIPPET, HtmlDelegate(self))
        self.results_view.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        self.results_view.activated.connect(self._on_result_activated)
        self.results_model.inclusion_changed.connect(self._update_prompt)
        self.empty_label = QLabel("", self)
        self.empty_label.setObjectName("emptyLabel")
        self.empty_label.setWordWrap(True)
        self.empty_label.setStyleSheet("color: #666; padding: 4px")
        left = QWidget(self)
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.empty_label)
        lv.addWidget(self.results_view)
        more = QHBoxLayout()
        self.match_count_label = QLabel("", self)
        self.match_count_label.setObjectName("matchCountLabel")
        self.show_more_button = QPushButton(f"Show {RESULTS_K} more", self)
        self.show_more_button.setObjectName("showMoreButton")
        self.show_more_button.clicked.connect(self.show_more)
        self.show_more_button.hide()
        self.group_check = QCheckBox("Group by note", self)
        self.group_check.setObjectName("groupByNoteCheck")
        self.group_check.setToolTip("Each note once, at its best chunk; its other matching chunks folded beneath it")
        self.group_check.toggled.connect(self._on_group_toggled)
        more.addWidget(self.match_count_label, 1)
        more.addWidget(self.group_check)
        more.addWidget(self.show_more_button)
        lv.addLayout(more)

        # Why it ranked
        why = QWidget(self)
        wv = QVBoxLayout(why)
        wv.setContentsMargins(4, 0, 0, 0)
        self.chunk_title = QLabel("Select a result to see its text and why it ranked.", self)
        self.chunk_title.setObjectName("chunkTitle")
        self.chunk_title.setWordWrap(True)
        self.ranks_label = QLabel("", self)
        self.ranks_label.setObjectName("ranksLabel")
        self.fusion_label = QLabel("", self)
        self.fusion_label.setObjectName("fusionLabel")
        self.fusion_label.setWordWrap(True)
        self.fusion_label.hide()
        self.chunk_view = QTextBrowser(self)
        self.chunk_view.setObjectName("chunkView")
        self.breakdown_model = BreakdownModel(self)
        self.breakdown_view = QTableView(self)
        self.breakdown_view.setTabKeyNavigation(False)
        self.breakdown_view.setObjectName("breakdownView")
        self.breakdown_view.setModel(self.breakdown_model)
        self.breakdown_view.verticalHeader().hide()
        self.breakdown_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.breakdown_view.horizontalHeader().setSectionResizeMode(
            BreakdownModel.COL_SHARE, QHeaderView.ResizeMode.Stretch
        )
        self.breakdown_view.setItemDelegateForColumn(BreakdownModel.COL_SHARE, ShareBarDelegate(self))
        self.breakdown_view.selectionModel().currentRowChanged.connect(self._on_breakdown_row_changed)
        self.stats_label = QLabel("", self)
        self.stats_label.setObjectName("statsLabel")
        self.stats_label.setWordWrap(True)  # unwrapped, it drew over the term table in small windows
        self.breakdown_view.setMinimumHeight(5 * self.breakdown_view.fontMetrics().lineSpacing() + 40)
        self.chunk_view.setMinimumHeight(4 * self.chunk_view.fontMetrics().lineSpacing())
        self.formula_label = QLabel("", self)
        self.formula_label.setObjectName("formulaLabel")
        self.formula_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.formula_label.setWordWrap(True)
        buttons = QHBoxLayout()
        self.pin_button = QPushButton("Pin for compare", self)
        self.pin_button.setObjectName("pinButton")
        self.pin_button.setCheckable(True)
        self.pin_button.setToolTip("Pin this result, then select another to compare their breakdowns (Ctrl+P)")
        self.pin_button.clicked.connect(self._on_pin_clicked)
        self.copy_explanation_button = QPushButton("Copy explanation", self)
        self.copy_explanation_button.setObjectName("copyExplanationButton")
        self.copy_explanation_button.clicked.connect(self.copy_explanation)
        buttons.addWidget(self.pin_button)
        buttons.addWidget(self.copy_explanation_button)
        buttons.addStretch(1)
        self.compare_view = QTableWidget(0, 4, self)
        self.compare_view.setTabKeyNavigation(False)
        self.compare_view.setObjectName("compareView")
        self.compare_view.setHorizontalHeaderLabels(["Term", "Pinned", "Selected", "Selected − pinned"])
        self.compare_view.verticalHeader().hide()
        self.compare_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.compare_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.compare_label = QLabel("", self)
        self.compare_label.setObjectName("compareLabel")
        self.compare_view.hide()
        self.compare_label.hide()
        wv.addWidget(self.chunk_title)
        wv.addWidget(self.ranks_label)
        wv.addWidget(self.fusion_label)
        split_why = QSplitter(Qt.Orientation.Vertical, self)
        split_why.setObjectName("whySplitter")
        self.why_splitter = split_why
        self.chunk_view.setMinimumHeight(70)
        self.breakdown_view.setMinimumHeight(120)
        self.compare_view.setMinimumHeight(90)
        split_why.addWidget(self.chunk_view)
        table_box = QWidget(self)
        tv = QVBoxLayout(table_box)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(self.breakdown_view)
        tv.addWidget(self.stats_label)
        tv.addWidget(self.formula_label)
        tv.addLayout(buttons)
        tv.addWidget(self.compare_label)
        tv.addWidget(self.compare_view)
        split_why.addWidget(table_box)
        wv.addWidget(split_why)

        # Prompt
        prompt_box = QWidget(self)
        pv = QVBoxLayout(prompt_box)
        pv.setContentsMargins(4, 0, 0, 0)
        controls = QHBoxLayout()
        self.topk_radio = QRadioButton("Top", self)
        self.topk_radio.setObjectName("topkRadio")
        self.k_spin = QSpinBox(self)
        self.k_spin.setObjectName("promptKSpin")
        self.k_spin.setRange(1, RESULTS_K)
        self.budget_radio = QRadioButton("Budget", self)
        self.budget_radio.setObjectName("budgetRadio")
        self.budget_spin = QSpinBox(self)
        self.budget_spin.setObjectName("budgetSpin")
        self.budget_spin.setRange(50, 200_000)
        self.budget_spin.setSingleStep(100)
        self.budget_spin.setSuffix(" tokens")
        group = QButtonGroup(self)
        group.addButton(self.topk_radio)
        group.addButton(self.budget_radio)
        self.order_combo = QComboBox(self)
        self.order_combo.setObjectName("orderCombo")
        self.order_combo.addItem("rank order", "rank")
        self.order_combo.addItem("best first and last", "ends")
        self.format_combo = QComboBox(self)
        self.format_combo.setObjectName("promptFormatCombo")
        self.format_combo.addItem("Markdown", "markdown")
        self.format_combo.addItem("XML tags", "xml")
        self.format_combo.setToolTip('Excerpts quoted with "> ", or as <excerpt n="1" source="…"> elements')
        instructions = QPushButton("Instructions…", self)
        instructions.setObjectName("instructionsButton")
        instructions.clicked.connect(self.edit_instructions)
        controls.addWidget(self.topk_radio)
        controls.addWidget(self.k_spin)
        controls.addWidget(self.budget_radio)
        controls.addWidget(self.budget_spin)
        controls.addWidget(self.order_combo)
        controls.addWidget(self.format_combo)
        controls.addStretch(1)
        controls.addWidget(instructions)
        self.prompt_preview = QPlainTextEdit(self)
        self.prompt_preview.setObjectName("promptPreview")
        self.prompt_preview.setReadOnly(True)
        self.prompt_info = QLabel("", self)
        self.prompt_info.setObjectName("promptInfo")
        self.prompt_info.setWordWrap(True)
        self.copy_prompt_button = QPushButton("Copy prompt", self)
        self.copy_prompt_button.setObjectName("copyPromptButton")
        self.copy_prompt_button.setToolTip("Copy exactly the text above (Ctrl+Shift+C)")
        self.copy_prompt_button.clicked.connect(self.copy_prompt)
        self.allow_secrets_check = QCheckBox("Include secrets in this copy", self)
        self.allow_secrets_check.setObjectName("allowSecretsCheck")
        self.allow_secrets_check.setToolTip(
            "Keys, tokens and passwords found in the excerpts are redacted in the prompt. Tick to copy them\n"
            "as they are, this once (it unticks itself after the copy)."
        )
        self.allow_secrets_check.hide()
        bottom = QHBoxLayout()
        bottom.addWidget(self.prompt_info, 1)
        bottom.addWidget(self.allow_secrets_check)
        bottom.addWidget(self.copy_prompt_button)
        pv.addWidget(QLabel("<b>Prompt preview</b> — exactly what Copy puts on the clipboard", self))
        pv.addLayout(controls)
        pv.addWidget(self.prompt_preview)
        pv.addLayout(bottom)

        self.right_splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.right_splitter.setObjectName("rightSplitter")
        why_scroll = QScrollArea(self)  # a small window scrolls the explanation instead of squeezing it
        why_scroll.setObjectName("whyScroll")
        why_scroll.setWidgetResizable(True)
        why_scroll.setFrameShape(QFrame.Shape.NoFrame)
        why_scroll.setWidget(why)
        self.right_splitter.addWidget(why_scroll)
        self.right_splitter.addWidget(prompt_box)
        self.main_splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.main_splitter.setObjectName("mainSplitter")
        left.setMinimumWidth(420)  # the results keep room for their passage when the window shrinks
        self.main_splitter.addWidget(left)
        self.main_splitter.addWidget(self.right_splitter)
        self.main_splitter.setStretchFactor(0, 3)
        self.main_splitter.setStretchFactor(1, 2)
        self.setCentralWidget(self.main_splitter)

        # Status bar: index info (click for skipped files), progress + cancel while building.
        self.index_button = QPushButton("No folder open", self)
        self.index_button.setObjectName("indexStatusButton")
        self.index_button.setFlat(True)
        self.index_button.clicked.connect(self.show_index_report)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("buildProgress")
        self.progress.setMaximumWidth(260)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName("cancelBuildButton")
        self.cancel_button.clicked.connect(self.cancel_build)
        self.cancel_button.hide()
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)
        self.statusBar().addPermanentWidget(self.index_button)

        self.search_timer = QTimer(self)
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self.search_timer.timeout.connect(self.run_search)
        self.search_field.textChanged.connect(self._on_query_edited)
        self.search_field.returnPressed.connect(self.run_search)
        self.analyzer_combo.currentTextChanged.connect(self._on_params_changed)
        self.fold_accents_check.toggled.connect(self._on_params_changed)
        self.mode_combo.currentTextChanged.connect(self._on_mode_changed)
        self.k1_spin.valueChanged.connect(self._on_params_changed)
        self.b_spin.valueChanged.connect(self._on_params_changed)
        for w in (self.topk_radio, self.budget_radio):
            w.toggled.connect(self._update_prompt)
        self.k_spin.valueChanged.connect(self._update_prompt)
        self.budget_spin.valueChanged.connect(self._update_prompt)
        self.order_combo.currentIndexChanged.connect(self._update_prompt)
        self.format_combo.currentIndexChanged.connect(self._update_prompt)
        self.allow_secrets_check.toggled.connect(self._update_prompt)

    def _param_spin(self, bar: QToolBar, label: str, name: str, top: float, step: float, tip: str) -> QDoubleSpinBox:
        bar.addWidget(QLabel(f"  {label} "))
        spin = QDoubleSpinBox(self)
        spin.setObjectName(name)
        spin.setRange(0.0, top)
        spin.setSingleStep(step)
        spin.setDecimals(2)
        spin.setToolTip(tip)
        bar.addWidget(spin)
        return spin

    def _build_menus(self) -> None:
        def action(
            menu: object, text: str, slot: object, shortcut: QKeySequence | str | None = None, name: str = ""
        ) -> QAction:
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            if name:
                act.setObjectName(name)
            act.triggered.connect(slot)
            menu.addAction(act)  # type: ignore[attr-defined]
            return act

        file_menu = self.menuBar().addMenu("&File")
        action(file_menu, "&Open Folder…", self.choose_folder, QKeySequence.StandardKey.Open, "openFolderAction")
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("recentMenu")
        action(file_menu, "Re&fresh Index", self.refresh, "F5", "refreshAction")
        action(file_menu, "&Settings…", self.edit_settings, "Ctrl+,", "settingsAction")
        file_menu.addSeparator()
        action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit, "quitAction")
        edit_menu = self.menuBar().addMenu("&Edit")
        action(edit_menu, "&Find", self.focus_search, "Ctrl+L", "focusSearchAction")
        action(edit_menu, "Next &Pane", self.focus_next_pane, "F6", "nextPaneAction")
        action(
            edit_menu, "Previous Pane", lambda: self.focus_next_pane(backwards=True), "Shift+F6", "previousPaneAction"
        )
        action(edit_menu, "Copy &Prompt", self.copy_prompt, "Ctrl+Shift+C", "copyPromptAction")
        action(edit_menu, "Copy &Explanation", self.copy_explanation, "Ctrl+Shift+E", "copyExplanationAction")
        action(edit_menu, "P&in Result for Compare", self.toggle_pin, "Ctrl+P", "pinAction")
        action(edit_menu, "&Why Not This Note?…", self.show_why_not, "Ctrl+J", "whyNotAction")
        action(edit_menu, "Prompt &Instructions…", self.edit_instructions, None, "instructionsAction")
        tools_menu = self.menuBar().addMenu("&Tools")
        action(tools_menu, "&Evaluate on Questions…", self.show_evaluation, "Ctrl+Shift+V", "evaluateAction")
        action(tools_menu, "What Was &Indexed…", self.show_index_report, "Ctrl+I", "indexReportAction")
        note_menu = self.menuBar().addMenu("&Note")
        action(note_menu, "&Open in Editor", self.open_current_note, "Ctrl+Return", "openNoteAction")
        action(note_menu, "&Reveal in Folder", self.reveal_current_note, "Ctrl+Shift+R", "revealAction")
        help_menu = self.menuBar().addMenu("&Help")
        action(help_menu, "&Keyboard Shortcuts", self.show_shortcuts, "F1", "shortcutsAction")
        action(help_menu, "&About ragdesk", self.show_about, None, "aboutAction")

    def _restore_state(self) -> None:
        s = self.settings
        self.analyzer_combo.setCurrentText(s.analyzer().name)
        self.fold_accents_check.setChecked(s.analyzer().fold_accents)
        mode = s.get("search/mode", "bm25")
        if mode in MODES and (mode == "bm25" or dense_available(s.embedder)):
            self.mode_combo.setCurrentText(mode)
        self.k1_spin.setValue(s.k1())
        self.b_spin.setValue(s.b())
        self.k_spin.setValue(s.get("prompt/k", 4, int))
        self.budget_spin.setValue(s.get("prompt/budget", 500, int))
        (self.budget_radio if s.get("prompt/mode", "k") == "budget" else self.topk_radio).setChecked(True)
        self.order_combo.setCurrentIndex(max(0, self.order_combo.findData(s.get("prompt/order", "rank"))))
        self.format_combo.setCurrentIndex(max(0, self.format_combo.findData(s.get("prompt/format", "markdown"))))
        self.group_check.setChecked(s.get("results/grouped", False, bool))
        geometry = s.get("window/geometry", None, QByteArray)
        if geometry is None or not self.restoreGeometry(geometry):
            screen = QGuiApplication.primaryScreen()
            area = screen.availableGeometry() if screen is not None else None
            width = min(1400, int(area.width() * 0.9)) if area is not None else 1280  # suits the screen
            height = min(900, int(area.height() * 0.9)) if area is not None else 800
            self.resize(width, height)
            self.main_splitter.setSizes([width * 11 // 20, width * 9 // 20])  # the results win space
            self.right_splitter.setSizes([520, 280])
            self.why_splitter.setSizes([150, 370])
        for key, splitter in (
            ("window/main_splitter", self.main_splitter),
            ("window/right_splitter", self.right_splitter),
            ("window/why_splitter", self.why_splitter),
        ):
            state = s.get(key, None, QByteArray)
            if state is not None:
                splitter.restoreState(state)
        self._refresh_recent_menu()

    def save_state(self) -> None:
        s = self.settings
        s.set("search/analyzer", self.analyzer_combo.currentText())
        s.set("search/fold_accents", self.fold_accents_check.isChecked())
        s.set("search/mode", self.mode_combo.currentText())
        s.set("search/k1", self.k1_spin.value())
        s.set("search/b", self.b_spin.value())
        s.set("prompt/k", self.k_spin.value())
        s.set("prompt/budget", self.budget_spin.value())
        s.set("prompt/mode", "budget" if self.budget_radio.isChecked() else "k")
        s.set("prompt/order", self.order_combo.currentData())
        s.set("prompt/format", self.format_combo.currentData())
        s.set("results/grouped", self.group_check.isChecked())
        s.set("window/geometry", self.saveGeometry())
        s.set("window/main_splitter", self.main_splitter.saveState())
        s.set("window/right_splitter", self.right_splitter.saveState())
        s.set("window/why_splitter", self.why_splitter.saveState())
        s.sync()

    # ---- folders and building -----------------------------------------------------------------
    def open_folder(self, folder: str) -> None:
        """Open a notes folder: the worker shows its stored index at once (if any), then refreshes it."""
        path = Path(folder)
        if not path.is_dir():
            self._show_error(f"The folder {folder} does not exist or cannot be read.")
            return
        self.folder = str(path.resolve())
        if self.engine.building and self._building_folder != self.folder:
            # the folder being indexed was left: stop that build now (it publishes nothing)
            self.engine.cancel_build()
        self.pinned = None  # chunk ids, pins and unticks belong to the folder that was open
        self.results_model.excluded.clear()
        self.watcher.clear()
        self.settings.remember_folder(self.folder)
        self._refresh_recent_menu()
        self.setWindowTitle(f"ragdesk — {path.name}")
        self.library = None
        self.results_model.clear()
        self._show_selection(None)
        self._update_prompt()
        is_samples = Path(self.folder) == sample_notes_folder().resolve()
        self.empty_label.clear()  # the welcome line and the last folder's notes belong to it
        self.empty_label.hide()
        self.match_count_label.clear()
        self.show_more_button.hide()
        if self.statusBar().currentMessage().startswith("Note: "):
            self.statusBar().clearMessage()
        if is_samples and not self.search_field.text():
            self.empty_label.setText(
                "Welcome! These are ragdesk's sample notes. Try a question such as "
                f"“{WELCOME_QUERY}”. Select a result to see why it ranked (right), "
                "and press Copy prompt (Ctrl+Shift+C) to paste a ready prompt into your chat assistant."
            )
            self.search_field.setText(WELCOME_QUERY)
        self.refresh()

    def refresh(self, verify: bool = False) -> None:
        """Re-read new and changed notes in the worker; the current index stays searchable meanwhile.

        With `verify`, the stored index's checksums are checked first and a damaged one is rebuilt.
        """
        if self.folder is None:
            return
        request = BuildRequest(
            self.folder,
            self.index_dir,
            self.settings.index_settings(),
            self.current_analyzer(),
            embedder=self.settings.embedder if self.mode_combo.currentText() != "bm25" else None,
            showing=self.library if self.library is not None and self.library.folder == Path(self.folder) else None,
            verify=verify,
        )
        if self.engine.building:
            self._pending_build = request
            return
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.show()
        self.statusBar().showMessage("Indexing…")
        self.build_state_changed.emit("building")
        self._building_folder = request.folder
        self.engine.build(request)

    def _on_folder_changed(self) -> None:
        self.statusBar().showMessage("Notes changed on disk: updating the index…", 3000)
        self.refresh()

    def cancel_build(self) -> None:
        self._pending_build = None
        self.engine.cancel_build()

    def _on_progress_changed(self, msg: Progress | EmbeddingProgress) -> None:
        if self._building_folder != self.folder:
            return  # a build of a folder the user has left, being cancelled
        self.progress.setRange(0, max(msg.total, 1))
        self.progress.setValue(msg.done)
        if isinstance(msg, EmbeddingProgress):  # the build process is embedding chunks for dense search
            self.progress.setFormat(f"{msg.done}/{msg.total} chunks embedded")
            self.statusBar().showMessage("Computing embeddings for dense search…")
            return
        self.progress.setFormat(f"{msg.done}/{msg.total} files · {msg.chunks} chunks")
        if msg.current:  # total 0: not started yet (e.g. waiting for another process's build of this folder)
            self.statusBar().showMessage(f"Indexing {msg.current}" if msg.total else msg.current)

    def _build_finished(self) -> bool:
        """Hide progress; start a queued build if one is waiting (returns True when it did)."""
        self.engine.building = False
        self.progress.hide()
        self.cancel_button.hide()
        if self._pending_build is not None:
            request, self._pending_build = self._pending_build, None
            if request.folder == self.folder:
                self.refresh()
                return True
        return False

    def _on_index_opened(self, library: IndexReader) -> None:
        """The stored index, opened by the worker: search it at once while the refresh runs."""
        if self.library is None and library.folder == Path(self.folder or ""):
            self._use_library(library)

    def _on_index_built(self, outcome: BuildOutcome) -> None:
        queued = self._build_finished()
        if outcome.library.folder != Path(self.folder or ""):
            return  # a build for a folder the user has since left
        report = outcome.report
        if outcome.damaged:
            self.statusBar().showMessage(f"The stored index was damaged ({outcome.damaged}); it was rebuilt.", 10000)
        elif report.rebuilt:
            self.statusBar().showMessage(
                f"Indexed in {report.elapsed_s:.1f} s: {report.added} added, {report.changed} changed, "
                f"{report.removed} removed",
                6000,
            )
        else:
            self.statusBar().showMessage("Index is up to date", 3000)
        self._use_library(outcome.library)
        if not queued:
            self.build_state_changed.emit("built")

    def _on_build_failed(self, error: Exception) -> None:
        message = describe(error)
        if self._build_finished():
            return  # the failed build was of a folder the user has left
        kept = " The previous index is still in use." if self.library is not None else ""
        self.statusBar().showMessage(f"Indexing failed: {message}.{kept}", 15000)
        self._show_error(f"Indexing failed: {message}.{kept}")
        self.build_state_changed.emit("failed")

    def _on_build_cancelled(self) -> None:
        if self._build_finished():
            return  # cancelled because another folder was opened; its build has started
        kept = " The previous index is still in use." if self.library is not None else ""
        self.statusBar().showMessage(f"Indexing cancelled.{kept}", 8000)
        self.build_state_changed.emit("cancelled")

    def _use_library(self, library: IndexReader) -> None:
        if self.pinned is not None and self.library is not None and library is not self.library:
            self._follow_pin(library)
        self.library = library
        self.engine.set_library(library)
        if self.folder is not None:
            self.watcher.watch(self.folder, library.note_paths)
        n_skip = sum(1 for s in library.skipped if not s.loaded)
        n_dec = len(library.skipped) - n_skip
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(library.built_at))
        text = f"{len(library.notes)} files · {library.n_chunks} chunks · built {built}"
        if library.skipped:
            text += f" · {n_skip} skipped" + (f", {n_dec} re-decoded" if n_dec else "")
        self.index_button.setText(text)
        self.index_button.setToolTip("Click to see every file: indexed, decoded with a fallback, or skipped and why")
        self.library_loaded.emit(library)
        self.run_search()

    def _follow_pin(self, library: IndexReader) -> None:
        """A refreshed index numbers chunks anew: the pin follows its passage (note path and span),
        or goes, with a word, when that passage changed."""
        assert self.pinned is not None
        chunk = library.chunk_at(self.pinned.path, self.pinned.span)
        if chunk is None:
            self.statusBar().showMessage(f"Unpinned {self.pinned.shown_path}: that passage changed on disk.", 6000)
            self.pinned = None
            self.pin_button.setChecked(False)
            self.pin_button.setText("Pin for compare")
        else:
            self.pinned = replace(self.pinned, chunk_id=chunk)

    # ---- searching ----------------------------------------------------------------------------
    def current_analyzer(self) -> AnalyzerConfig:
        config = self.settings.analyzer().with_name(self.analyzer_combo.currentText())
        return replace(config, fold_accents=self.fold_accents_check.isChecked())

    def _on_query_edited(self, _text: str) -> None:
        self.results_k = RESULTS_K  # a new query starts with one page of results
        self.search_timer.start()

    def _no_notes_message(self) -> str:
        """For a folder with no notes: what was looked for and how many other files were passed over."""
        settings = self.library.settings if self.library is not None else self.settings.index_settings()
        exts = settings.load.extensions
        other = 0
        for _dirpath, dirnames, filenames in os.walk(self.folder or "."):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            other += sum(1 for f in filenames if not f.startswith(".") and not f.lower().endswith(exts))
            if other > 100_000:
                break
        skipped = len(self.library.skipped) if self.library is not None else 0
        shown_exts = ", ".join(exts[:4]) + (", …" if len(exts) > 4 else "")
        text = f"No notes found in this folder (looked for {shown_exts}; {other:,} other files ignored"
        text += f", {skipped} note files skipped: click the status bar)" if skipped else ")"
        return text + ". Open another folder with Ctrl+O, or change the note types in Settings (Ctrl+,)."

    def _on_group_toggled(self, grouped: bool) -> None:
        selected = self.current_hit()
        self.results_model.set_grouped(grouped)
        row = next((i for i, h in enumerate(self.results_model.hits) if selected and h.key == selected.key), 0)
        if self.results_model.hits:
            self.results_view.selectRow(row)
        self._update_prompt()

    def show_more(self) -> None:
        """The next page of results (the list holds the first RESULTS_K; this adds as many)."""
        self.results_k += RESULTS_K
        self.run_search()

    def _on_params_changed(self, *_args: object) -> None:
        self.run_search()

    def _on_mode_changed(self, mode: str) -> None:
        if (
            mode != "bm25"
            and self.library is not None
            and not self.library.has_dense(embedder_name(self.settings.embedder))
        ):
            self.statusBar().showMessage("Computing embeddings for dense search (once per index)…")
            self.refresh()  # the build process embeds the chunks; results follow when it is done
            return
        self.run_search()

    def _on_reset_clicked(self) -> None:
        """Back to the defaults of every ranking setting in the toolbar: analyzer, accents, mode, k1, b."""
        self.analyzer_combo.setCurrentText(AnalyzerConfig().name)
        self.fold_accents_check.setChecked(False)
        self.mode_combo.setCurrentIndex(0)
        self.k1_spin.setValue(DEFAULT_K1)
        self.b_spin.setValue(DEFAULT_B)

    def run_search(self) -> None:
        self.search_timer.stop()
        if self.library is None:
            return
        query = self.search_field.text()
        request = SearchRequest(
            self.engine.next_serial(),
            query,
            self.current_analyzer(),
            self.k1_spin.value(),
            self.b_spin.value(),
            self.results_k,
            self.pinned.chunk_id if self.pinned is not None else None,
            self.mode_combo.currentText(),
            self.settings.embedder,
        )
        self.last_request = request
        self.engine.search(request)

    def _on_search_finished(self, outcome: SearchOutcome) -> None:
        if self.last_request is None or outcome.request.serial != self.last_request.serial:
            return  # overtaken by a newer query
        if outcome.library is not self.library:
            return
        previous_chunk = self.current_hit().chunk_id if self.current_hit() else None
        result = outcome.result
        self.results_model.set_result(result, outcome.highlights, outcome.stale, outcome.findings)
        if result.hits:
            welcome = self.empty_label.text().startswith("Welcome") and result.query == WELCOME_QUERY
            self.empty_label.setVisible(welcome)
        elif self.library is not None and not self.library.note_paths:
            self.empty_label.setText(self._no_notes_message())
        else:
            reason = result.reason or "no chunk matches"
            self.empty_label.setText(
                f"No results: {reason}."
                if result.query.strip()
                else "Type a question or some words to search your notes."
            )
            self.empty_label.show()
        if result.reason and result.hits:
            self.statusBar().showMessage(f"Note: {result.reason}", 5000)
        elif self.statusBar().currentMessage().startswith("Note: "):
            self.statusBar().clearMessage()  # the previous query's note is not about this one
        total = max(outcome.total, len(result.hits))
        self.match_count_label.setText(f"{len(result.hits)} of {total:,} matches" if result.hits else "")
        self.show_more_button.setVisible(total > len(result.hits))
        if self.pinned is not None and outcome.pinned_rows:
            self.pinned = replace(self.pinned, rank=0, score=outcome.pinned_score, explain=outcome.pinned_rows)
        row = next((i for i, h in enumerate(result.hits) if h.chunk_id == previous_chunk), 0 if result.hits else -1)
        if row >= 0:
            self.results_view.selectRow(row)
        else:
            self._show_selection(None)
        self._update_prompt()
        self.results_shown.emit(result)

    def _on_search_failed(self, error: Exception) -> None:
        message = describe(error)
        generation = self.library.generation if self.library is not None else None
        if isinstance(error, IndexDamaged) and generation != self._verified_generation:
            # e.g. an index file altered on disk: check every file and rebuild (once per generation)
            self._verified_generation = generation
            self.statusBar().showMessage(f"The index is damaged ({message}); rebuilding it…", 10000)
            self.refresh(verify=True)
            return
        self.statusBar().showMessage(f"Search failed: {message}", 10000)

    # ---- selection and breakdown ---------------------------------------------------------------
    def current_hit(self) -> Hit | None:
        index = self.results_view.currentIndex()
        return self.results_model.hit_at(index.row()) if index.isValid() else None

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_selection(self.results_model.hit_at(current.row()) if current.isValid() else None)

    def _show_selection(self, hit: Hit | None) -> None:
        if hit is None:
            self.chunk_title.setText("Select a result to see its text and why it ranked.")
            self.chunk_view.clear()
            self.fusion_label.hide()
            self.breakdown_model.set_rows([])
            self.stats_label.clear()
            self.formula_label.clear()
            self.ranks_label.clear()
            self._update_compare()
            return
        stale = (
            " — ✎ changed on disk since indexing (F5 to refresh)" if hit.chunk_id in self.results_model.stale else ""
        )
        self.chunk_title.setText(
            f"<b>{html.escape(hit.shown_path)}</b>{' › ' + html.escape(shown(hit.heading)) if hit.heading else ''} "
            f"· {hit.location} · score {hit.score:.3f}{stale}"
        )
        spans = self.results_model.highlights.get(hit.chunk_id, [])
        body = highlighted_html(hit.text, spans).replace("\n", "<br>")
        flags = self.results_model.findings.get(hit.chunk_id, [])  # found once, when the results arrived
        warn = ""
        if flags:
            warn = (
                "<p style='background:#fff3cd;padding:4px'>⚠ This chunk contains instruction-like text ("
                + html.escape(flags[0].reason)
                + "). It is quoted as data in the prompt.</p>"
            )
        context = self.library.chunk_context(hit.chunk_id) if self.library is not None else ""
        if context:
            context = (
                "<p style='color:#666'>Also indexed with this chunk (title and headings): "
                + html.escape(" › ".join(context.split(" \n")))
                + "</p>"
            )
        self.chunk_view.setHtml(warn + context + f"<div style='font-family:monospace'>{body}</div>")
        self.breakdown_model.set_rows(hit.explain)
        self.breakdown_view.resizeColumnsToContents()
        self.fusion_label.setVisible(hit.fusion is not None)
        if hit.fusion is not None:
            mode = self.results_model.result.mode if self.results_model.result else ""
            self.fusion_label.setText(
                f"<b>{html.escape(mode)}</b>: {html.escape(hit.fusion.describe())}"
                "<br>The BM25 breakdown of this chunk is below."
            )
        r0 = hit.explain[0] if hit.explain else None
        result = self.results_model.result
        if r0 is not None and result is not None:
            bm25 = sum(r.contribution for r in hit.explain)  # what the rows sum to, in every mode
            fused = f" (the {result.mode} score {hit.score:.4f} is explained above)" if hit.fusion is not None else ""
            self.stats_label.setText(
                f"|D| = {hit.length} tokens · avgdl = {result.avgdl:.2f} · N = {result.n_docs} chunks · "
                f"k1 = {result.k1:g} · b = {result.b:g} · BM25 score = Σ contributions = {bm25:.3f}{fused}"
            )
        best = max(range(len(hit.explain)), key=lambda i: hit.explain[i].contribution, default=-1)
        if best >= 0:
            self.breakdown_view.selectRow(best)
        self._update_compare()
        self.ranks_label.setText("Rank under each analyzer: computing…")
        if self.last_request is not None:
            self.engine.find_ranks(self.last_request, hit.chunk_id)

    def _on_breakdown_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or current.row() >= len(self.breakdown_model.rows):
            self.formula_label.clear()
            return
        row: TermRow = self.breakdown_model.rows[current.row()]
        n_docs = self.results_model.result.n_docs if self.results_model.result else 0
        self.formula_label.setText(
            f"{swatch(term_color(row.term))} <b>{html.escape(row.term)}</b>: contribution = idf · f · (k1 + 1) / "
            f"(f + k1 · (1 − b + b · |D| / avgdl)) → {html.escape(row.formula)}<br>"
            f"idf = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)) = ln(1 + ({n_docs} − {row.n_t} + 0.5) / ({row.n_t} + 0.5))"
            f" = {row.idf:.3f}"
        )

    def _about_selection(self, serial: int, chunk_id: int) -> bool:
        """Whether a worker's answer is about the selected result of the current query."""
        hit = self.current_hit()
        return (
            hit is not None
            and hit.chunk_id == chunk_id
            and self.last_request is not None
            and (serial == self.last_request.serial)
        )

    def _on_ranks_failed(self, serial: int, chunk_id: int, message: str) -> None:
        if self._about_selection(serial, chunk_id):
            self.ranks_label.setText(f"Rank under each analyzer — not available: {message}")

    def _on_ranks_found(self, serial: int, chunk_id: int, ranks: dict[str, int | None]) -> None:
        if not self._about_selection(serial, chunk_id):
            return
        parts = [f"{name}: {ordinal(rank) if rank else 'no match'}" for name, rank in ranks.items()]
        self.ranks_label.setText("Rank under each analyzer — " + " · ".join(parts))

    # ---- compare -----------------------------------------------------------------------------
    def toggle_pin(self) -> None:
        """Ctrl+P: pin the selected result; unpin when the selected one is the pinned one."""
        hit = self.current_hit()
        pin = hit is not None and (self.pinned is None or self.pinned.key != hit.key)
        self.pin_button.setChecked(pin)
        self._on_pin_clicked(pin)

    def _on_pin_clicked(self, checked: bool) -> None:
        hit = self.current_hit()
        self.pinned = hit if checked and hit is not None else None
        self.pin_button.setChecked(self.pinned is not None)
        self.pin_button.setText("Unpin" if self.pinned else "Pin for compare")
        self._update_compare()

    def _update_compare(self) -> None:
        hit = self.current_hit()
        pinned = self.pinned
        visible = pinned is not None and hit is not None
        self.compare_view.setVisible(visible)
        self.compare_label.setVisible(pinned is not None)
        if pinned is None:
            return
        if hit is None or hit.chunk_id == pinned.chunk_id:
            self.compare_label.setText(f"Pinned: {pinned.path} :{pinned.start_line}. Select another result to compare.")
            self.compare_view.setVisible(False)
            return
        diff = hit.score - pinned.score
        self.compare_label.setText(
            f"Selected ({hit.score:.3f}) vs pinned {pinned.path} :{pinned.start_line} ({pinned.score:.3f}): "
            f"{'+' if diff >= 0 else ''}{diff:.3f}"
        )
        pinned_rows = {r.label: r.contribution for r in pinned.explain}
        self.compare_view.setRowCount(len(hit.explain))
        for i, r in enumerate(hit.explain):
            p = pinned_rows.get(r.label, 0.0)
            values = [r.label, f"{p:.3f}", f"{r.contribution:.3f}", f"{r.contribution - p:+.3f}"]
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                if col == 0:
                    item.setBackground(term_color(r.term))
                self.compare_view.setItem(i, col, item)

    # ---- prompt ------------------------------------------------------------------------------
    def _update_prompt(self, *_args: object) -> None:
        hits = self.results_model.included_hits()
        known = self.results_model.findings
        excerpts = [Excerpt.of(h, known.get(h.chunk_id, [])) for h in hits]
        budget = self.budget_radio.isChecked()
        question = self.search_field.text()
        self.prompt = build_prompt(
            question,
            excerpts,
            self.settings.instructions,
            k=None if budget else self.k_spin.value(),
            budget_tokens=self.budget_spin.value() if budget else None,
            order=self.order_combo.currentData() or ORDERS[0],
            fmt=self.format_combo.currentData() or FORMATS[0],
        )
        allow = self.allow_secrets_check.isChecked()
        scroll = self.prompt_preview.verticalScrollBar().value()
        self.prompt_preview.setPlainText(self.prompt.for_copy(allow))
        self.prompt_preview.verticalScrollBar().setValue(scroll)
        self._mark_secrets(allow)
        info = f"{self.prompt.summary()} ({self.prompt.estimator})"
        if self.prompt.dropped_for_budget:
            info += f" · {len(self.prompt.dropped_for_budget)} excerpt(s) left out to fit the budget"
        for n, findings in self.prompt.flagged:
            info += f" · ⚠ [{n}] has instruction-like text ({findings[0].reason}); it is quoted as data"
        if self.prompt.secrets:
            where = ", ".join(f"[{n}] line {sec.line}: {sec.kind}" for n, sec in self.prompt.secrets)
            state = "included in this copy" if allow else "redacted"
            info += f" · 🔒 {len(self.prompt.secrets)} secret(s) {state} ({where})"
        self.allow_secrets_check.setVisible(bool(self.prompt.secrets))
        self.prompt_info.setText(info)

    def _mark_secrets(self, allowed: bool) -> None:
        """Highlight in the preview what was redacted (or, when allowed, the secrets themselves)."""
        text = self.prompt_preview.toPlainText()
        spans = (
            [(sec.start, sec.end) for sec in find_secrets(text)]
            if allowed
            else [m.span() for m in REDACTION_MARK.finditer(text)]
        )
        marks = []
        for start, end in spans:
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(QColor("#ffb3b3" if allowed else "#ffe8a3"))
            cursor = self.prompt_preview.textCursor()
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cursor
            marks.append(sel)
        self.prompt_preview.setExtraSelections(marks)

    def copy_prompt(self) -> None:
        text = self.prompt_preview.toPlainText()  # the preview is what is copied: secrets redacted unless allowed
        QGuiApplication.clipboard().setText(text)
        summary = self.prompt.summary() if self.prompt else ""
        if self.prompt is not None and self.prompt.secrets:
            allowed = self.allow_secrets_check.isChecked()
            summary += f", {len(self.prompt.secrets)} secret(s) {'included' if allowed else 'redacted'}"
        self.statusBar().showMessage(f"Copied prompt: {summary}", 5000)
        self.prompt_copied.emit(text)
        self.allow_secrets_check.setChecked(False)  # allowed for that copy only

    def copy_explanation(self) -> None:
        hit = self.current_hit()
        if hit is None:
            return
        header = f"Why “{self.search_field.text()}” ranked {hit.shown_path} › {shown(hit.heading)} #{hit.rank}:"
        QGuiApplication.clipboard().setText(explanation_text(hit.explain, hit.score, header))
        self.statusBar().showMessage("Copied explanation", 3000)

    def edit_instructions(self) -> None:
        dialog = InstructionsDialog(self.settings.instructions, self.settings.instruction_templates(), self)
        if dialog.exec():
            self.apply_instructions(dialog)

    def apply_instructions(self, dialog: InstructionsDialog) -> None:
        """Keep what the instructions dialog says: the text in use and the named templates."""
        self.settings.set("prompt/instructions", dialog.editor.toPlainText())
        self.settings.set_instruction_templates(dialog.user_templates())
        self._update_prompt()

    # ---- notes --------------------------------------------------------------------------------
    def _on_result_activated(self, index: QModelIndex) -> None:
        self.open_current_note()

    def _note_path(self) -> tuple[Path, int, int] | None:
        """The selected result's file, line and page (1 for notes that have no pages)."""
        hit = self.current_hit()
        if hit is None or self.folder is None:
            return None
        return Path(self.folder) / hit.path, hit.start_line, hit.page or 1

    def open_current_note(self) -> None:
        target = self._note_path()
        if target is None:
            return
        path, line, page = target
        command = self.settings.editor_command
        if command:  # e.g. code -g {path}:{line}, or evince --page-index={page} {path} for PDFs
            fill = {"{path}": str(path), "{line}": str(line), "{page}": str(page)}
            args = [_fill(a, fill) for a in shlex.split(command)]
            if not args or not QProcess.startDetached(args[0], args[1:]):
                self._show_error(f"Could not run the editor command: {command}")
            return
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            self.statusBar().showMessage(
                f"Opened {path.name} in the system's app for it; to open notes at their line, set an editor "
                "command in Settings (Ctrl+,), e.g. code -g {path}:{line}",
                8000,
            )
            return
        self._offer_editor_setting(path)

    def _offer_editor_setting(self, path: Path) -> None:
        """No editor command and no app for the file: say so, and offer Settings (Ctrl+Return was silent)."""
        message = (
            f"No editor command is set, and the system has no app to open {path.name}. Set one in "
            "Settings (Ctrl+,), e.g. code -g {path}:{line} or gedit +{line} {path}."
        )
        self.statusBar().showMessage(message, 15000)
        if os.environ.get("RAGDESK_NO_DIALOGS"):
            return
        answer = QMessageBox.question(
            self,
            "Open in editor",
            message + "\n\nOpen Settings now?",
            QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Open:
            self.edit_settings()

    def reveal_current_note(self) -> None:
        target = self._note_path()
        if target is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(target[0].parent)))

    # ---- dialogs and misc ---------------------------------------------------------------------
    def focus_search(self) -> None:
        self.search_field.setFocus()
        self.search_field.selectAll()

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open notes folder", self.folder or str(Path.home()))
        if folder:
            self.open_folder(folder)

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        for folder in self.settings.recent_folders:
            act = self.recent_menu.addAction(folder)
            act.triggered.connect(lambda _=False, f=folder: self.open_folder(f))
        self.recent_menu.setEnabled(bool(self.settings.recent_folders))

    def show_index_report(self) -> IndexReportDialog | None:
        """What was indexed: every file with its status, chunks, tokens, pages, and why for the rest."""
        if self.library is None:
            return None
        dialog = IndexReportDialog(self.library.report(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def edit_settings(self) -> None:
        dialog = SettingsDialog(
            self.settings.index_settings(), self.settings.editor_command, self.settings.embedder, self
        )
        if dialog.exec() and dialog.result_settings is not None:
            self.settings.set("editor/command", dialog.editor.text().strip())
            self.settings.set("dense/embedder", dialog.embedder.text().strip())
            self.apply_index_settings(dialog.result_settings)

    def apply_index_settings(self, new: IndexSettings) -> None:
        changed = new != self.settings.index_settings()
        self.settings.set_index_settings(new)
        if changed:
            self.refresh()

    def show_evaluation(self) -> EvaluateDialog | None:
        """Open the Evaluate dialog on the current index (non-modal, so searching goes on)."""
        if self.library is None:
            self.statusBar().showMessage("Open a folder first: evaluation runs on its index.", 5000)
            return None
        dialog = EvaluateDialog(self.library, self.current_analyzer(), self.k1_spin.value(), self.b_spin.value(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_shortcuts(self) -> None:
        QMessageBox.information(self, "Keyboard shortcuts", SHORTCUTS_HTML)

    def show_why_not(self) -> WhyNotDialog | None:
        """Ctrl+J: pick the note you expected for the current query; the search worker explains it."""
        if self.library is None or self.last_request is None or not self.search_field.text().strip():
            self.statusBar().showMessage("Search first, then ask why a note you expected is not higher.", 5000)
            return None
        dialog = WhyNotDialog(self.library.note_paths, self.search_field.text(), self)
        request = self.last_request
        dialog.note_chosen.connect(lambda path: self.engine.explain_note(request, path))
        self.engine.searcher.why_not_found.connect(dialog.show_answer)
        self.engine.searcher.why_not_failed.connect(dialog.show_error)
        dialog.finished.connect(lambda _result: self._disconnect_why_not(dialog))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        dialog.filter_edit.setFocus()
        return dialog

    def _disconnect_why_not(self, dialog: WhyNotDialog) -> None:
        self.engine.searcher.why_not_found.disconnect(dialog.show_answer)
        self.engine.searcher.why_not_failed.disconnect(dialog.show_error)

    def index_root(self) -> Path:
        return Path(self.index_dir) if self.index_dir else store.default_index_root()

    def clear_index_cache(self) -> str:
        root = self.index_root()
        if self.index_dir:
            return "This session uses a custom index folder; it was left alone."
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.exists() else 0
        failures = store.remove_tree(root)
        self.refresh()
        if failures:
            return (
                f"Could not clear the whole cache: {len(failures)} item(s) remain in {root} "
                f"(first: {failures[0]}). Close other ragdesk windows and try again, or remove them by hand."
            )
        return f"Cleared {size / 1e6:.1f} MB; the open folder is being re-indexed."

    def show_about(self) -> None:
        AboutDialog(str(self.index_root()), self.settings.file_name, self.clear_index_cache, self).exec()

    def show_missing_folder(self, folder: str) -> None:
        """`ragdesk /nope` from a launcher: the window opens on the last folder and says what was wrong."""
        self._show_error(f"The folder {folder} does not exist or cannot be read; showing {self.folder} instead.")

    def _show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 15000)
        if not os.environ.get("RAGDESK_NO_DIALOGS"):
            QMessageBox.warning(self, "ragdesk", message)

    def focus_next_pane(self, backwards: bool = False) -> None:
        """F6 / Shift+F6: search field, results, explanation, prompt controls, prompt text, and round."""
        panes = [self.search_field, self.results_view, self.breakdown_view, self.k_spin, self.prompt_preview]
        current = next((i for i, w in enumerate(panes) if w.hasFocus() or w.isAncestorOf(self.focusWidget())), -1)
        panes[(current + (-1 if backwards else 1)) % len(panes)].setFocus(Qt.FocusReason.TabFocusReason)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        view = getattr(self, "results_view", None)  # events arrive while the window is being built
        if obj is view and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Space and self.results_view.currentIndex().isValid():
                index = self.results_model.index(self.results_view.currentIndex().row(), ResultsModel.COL_USE)
                checked = self.results_model.data(index, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
                new = Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked
                self.results_model.setData(index, new, Qt.ItemDataRole.CheckStateRole)
                return True
        if obj is self.search_field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.results_model.rowCount():
                row = self.results_view.currentIndex().row()
                row = max(0, min(self.results_model.rowCount() - 1, row + (1 if key == Qt.Key.Key_Down else -1)))
                self.results_view.selectRow(row)
                return True
        return super().eventFilter(obj, event)

    def closeEvent(self, event: QCloseEvent) -> None:
        for dialog in self.findChildren(EvaluateDialog):
            dialog.close()  # stops its evaluation thread
        self.save_state()
        self.engine.shutdown()
        super().closeEvent(event)


SHORTCUTS = [
    ("Ctrl+L", "Focus the search field"),
    ("Up / Down", "Walk the results (also from the search field)"),
    ("Enter", "Search now (in the search field); open the note at the chunk (in the results)"),
    ("Ctrl+Return", "Open the selected note in your editor"),
    ("Ctrl+Shift+R", "Reveal the selected note in its folder"),
    ("Ctrl+Shift+C", "Copy the prompt"),
    ("Ctrl+Shift+E", "Copy the selected result's explanation"),
    ("Ctrl+P", "Pin / unpin the selected result for comparison"),
    ("F6 / Shift+F6", "Next / previous pane (search, results, explanation, prompt settings, prompt); Tab moves on too"),
    ("Space", "Tick or untick the selected result's Use (include it in the prompt)"),
    ("Ctrl+I", "What was indexed: every file with its status (also: click the file count in the status bar)"),
    ("Ctrl+J", "Why not this note? Pick the note you expected: its rank and every term beside the top hit's"),
    ("Ctrl+O", "Open a notes folder"),
    ("F5", "Refresh the index"),
    ("Ctrl+,", "Settings"),
    ("Ctrl+Shift+V", "Evaluate retrieval on a questions file"),
    ("F1", "This list"),
]
SHORTCUTS_HTML = (
    "<table>" + "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in SHORTCUTS) + "</table>"
)
