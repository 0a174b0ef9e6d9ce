"""The prompt pane: how many excerpts and in which order and format, the exact text Copy puts on the
clipboard (secrets redacted and marked), and the line that says what is in it."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QGuiApplication, QTextCursor
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..core.excerpts import Excerpt
from ..core.injection import Finding
from ..core.params import DEFAULT_PROMPT_K
from ..core.prompt import FORMATS, ORDERS, Prompt, build_prompt
from ..core.results import Hit
from ..core.secrets import REDACTION_MARK, find_secrets
from . import texts
from .results_pane import RESULTS_K
from .settings import AppSettings

REDACTED_COLOR, ALLOWED_COLOR = "#ffe8a3", "#ffb3b3"


class PromptPane(QWidget):
    """Builds the prompt from what it is given (`show_prompt`) and copies exactly what it shows."""

    settings_changed = Signal()  # k, budget, order, format or the secrets tick: the prompt must be rebuilt
    instructions_requested = Signal()
    prompt_copied = Signal(str)  # the exact text put on the clipboard

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prompt: Prompt | None = None
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
        instructions.clicked.connect(self.instructions_requested)
        self.preview = QPlainTextEdit(self)
        self.preview.setObjectName("promptPreview")
        self.preview.setReadOnly(True)
        self.info = QLabel("", self)
        self.info.setObjectName("promptInfo")
        self.info.setWordWrap(True)
        self.copy_button = QPushButton("Copy prompt", self)
        self.copy_button.setObjectName("copyPromptButton")
        self.copy_button.setToolTip("Copy exactly the text above (Ctrl+Shift+C)")
        self.copy_button.clicked.connect(self.copy)
        self.allow_secrets_check = QCheckBox("Include secrets in this copy", self)
        self.allow_secrets_check.setObjectName("allowSecretsCheck")
        self.allow_secrets_check.setToolTip(
            "Keys, tokens and passwords found in the excerpts are redacted in the prompt. Tick to copy them\n"
            "as they are, this once (it unticks itself after the copy)."
        )
        self.allow_secrets_check.hide()

        controls = QHBoxLayout()
        for widget in (self.topk_radio, self.k_spin, self.budget_radio, self.budget_spin):
            controls.addWidget(widget)
        controls.addWidget(self.order_combo)
        controls.addWidget(self.format_combo)
        controls.addStretch(1)
        controls.addWidget(instructions)
        bottom = QHBoxLayout()
        bottom.addWidget(self.info, 1)
        bottom.addWidget(self.allow_secrets_check)
        bottom.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        layout.addWidget(QLabel("<b>Prompt preview</b> — exactly what Copy puts on the clipboard", self))
        layout.addLayout(controls)
        layout.addWidget(self.preview)
        layout.addLayout(bottom)

        for radio in (self.topk_radio, self.budget_radio):
            radio.toggled.connect(self.settings_changed)
        self.k_spin.valueChanged.connect(self.settings_changed)
        self.budget_spin.valueChanged.connect(self.settings_changed)
        self.order_combo.currentIndexChanged.connect(self.settings_changed)
        self.format_combo.currentIndexChanged.connect(self.settings_changed)
        self.allow_secrets_check.toggled.connect(self.settings_changed)

    @property
    def secrets_allowed(self) -> bool:
        return self.allow_secrets_check.isChecked()

    def show_prompt(
        self,
        question: str,
        hits: list[Hit],
        findings: dict[int, list[Finding]],
        instructions: str,
        ticked: set[tuple[str, int, int]] | None = None,
        unticked: int = 0,
    ) -> Prompt:
        """Build the prompt for `question` from `hits` (in rank order; those whose key is `ticked` go in
        whatever k and the budget say) and show it as it will be copied; `findings` are the
        instruction-like passages already found in each chunk (not searched again)."""
        budget = self.budget_radio.isChecked()
        ticked = ticked or set()
        self.prompt = build_prompt(
            question,
            [replace(Excerpt.of(h, findings.get(h.chunk_id, [])), ticked=h.key in ticked) for h in hits],
            instructions,
            k=None if budget else self.k_spin.value(),
            budget_tokens=self.budget_spin.value() if budget else None,
            order=self.order_combo.currentData() or ORDERS[0],
            fmt=self.format_combo.currentData() or FORMATS[0],
        )
        allow = self.secrets_allowed
        scroll = self.preview.verticalScrollBar().value()
        self.preview.setPlainText(self.prompt.for_copy(allow))
        self.preview.verticalScrollBar().setValue(scroll)
        self._mark_secrets(allow)
        self.allow_secrets_check.setVisible(bool(self.prompt.secrets))
        ticked_in = sum(1 for h in hits if h.key in ticked)
        self.info.setText(texts.prompt_info_text(self.prompt, allow, ticked_in, unticked))
        return self.prompt

    def _mark_secrets(self, allowed: bool) -> None:
        """Highlight in the preview what was redacted (or, when allowed, the secrets themselves)."""
        text = self.preview.toPlainText()
        spans = (
            [(sec.start, sec.end) for sec in find_secrets(text)]
            if allowed
            else [m.span() for m in REDACTION_MARK.finditer(text)]
        )
        marks = []
        for start, end in spans:
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(QColor(ALLOWED_COLOR if allowed else REDACTED_COLOR))
            cursor = self.preview.textCursor()
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cursor
            marks.append(sel)
        self.preview.setExtraSelections(marks)

    def copy(self) -> None:
        """Put the preview on the clipboard: secrets redacted unless allowed, for this copy only (the tick
        is cleared after `prompt_copied` was handled, so its slots still see it)."""
        text = self.preview.toPlainText()
        QGuiApplication.clipboard().setText(text)
        self.prompt_copied.emit(text)
        self.allow_secrets_check.setChecked(False)

    def restore(self, settings: AppSettings) -> None:
        self.k_spin.setValue(settings.get("prompt/k", DEFAULT_PROMPT_K, int))
        self.budget_spin.setValue(settings.get("prompt/budget", 500, int))
        (self.budget_radio if settings.get("prompt/mode", "k") == "budget" else self.topk_radio).setChecked(True)
        self.order_combo.setCurrentIndex(max(0, self.order_combo.findData(settings.get("prompt/order", ORDERS[0]))))
        self.format_combo.setCurrentIndex(max(0, self.format_combo.findData(settings.get("prompt/format", FORMATS[0]))))

    def save(self, settings: AppSettings) -> None:
        settings.set("prompt/k", self.k_spin.value())
        settings.set("prompt/budget", self.budget_spin.value())
        settings.set("prompt/mode", "budget" if self.budget_radio.isChecked() else "k")
        settings.set("prompt/order", self.order_combo.currentData())
        settings.set("prompt/format", self.format_combo.currentData())
