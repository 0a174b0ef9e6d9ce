"""Dialogs: skipped files, index settings, prompt instructions, and About."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from ..core.chunking import CHUNKERS, ChunkOptions
from ..core.dense import DEFAULT_EMBEDDER
from ..core.loader import LoadOptions
from ..core.params import IndexSettings
from ..core.prompt import DEFAULT_INSTRUCTIONS


class SettingsDialog(QDialog):
    """Index settings (note types, ignore patterns, size limit, chunking) and the editor command."""

    def __init__(
        self,
        settings: IndexSettings,
        editor_command: str,
        embedder: str = DEFAULT_EMBEDDER,
        parent: QWidget | None = None,
        meaning_index: bool = True,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("settingsDialog")
        form = QFormLayout(self)
        self.extensions = QLineEdit(", ".join(settings.load.extensions))
        self.ignore = QPlainTextEdit("\n".join(settings.load.ignore))
        self.ignore.setPlaceholderText("gitignore-style patterns, one per line (also read from .ragdeskignore)")
        self.ignore.setFixedHeight(70)
        self.ignore.setTabChangesFocus(True)
        self.follow_links = QCheckBox("Follow links that lead outside the notes folder")
        self.follow_links.setObjectName("followOutsideLinks")
        self.follow_links.setChecked(settings.load.follow_outside_links)
        self.follow_links.setToolTip(
            "Off (default): a symbolic link whose target is outside this folder (a shared vault's link to /\n"
            "or to ~/.ssh) is skipped and listed with its reason, so nothing private leaks into a prompt."
        )
        self.max_mb = QDoubleSpinBox()
        self.max_mb.setRange(0.1, 1000)
        self.max_mb.setSuffix(" MB")
        self.max_mb.setValue(settings.load.max_bytes / 1024 / 1024)
        self.chunker = QComboBox()
        self.chunker.addItems(list(CHUNKERS))
        self.chunker.setCurrentText(settings.chunk.chunker)
        self.size = QSpinBox()
        self.size.setRange(5, 2000)
        self.size.setValue(settings.chunk.size)
        self.size.setSuffix(" words")
        self.overlap = QSpinBox()
        self.overlap.setRange(0, 1999)
        self.overlap.setValue(settings.chunk.overlap)
        self.overlap.setSuffix(" words")
        self.min_fill = QDoubleSpinBox()
        self.min_fill.setObjectName("minFillSpin")
        self.min_fill.setRange(0.1, 1.0)
        self.min_fill.setSingleStep(0.1)
        self.min_fill.setDecimals(2)
        self.min_fill.setValue(settings.chunk.min_fill)
        self.min_fill.setToolTip(
            "Markdown chunker: a chunk ends at the best heading, paragraph or sentence boundary between this\n"
            "share of the chunk size and the chunk size. 0.9 (default) keeps lengths even, which ranks best\n"
            "on the test questions; 0.5 keeps sections and paragraphs whole more often."
        )
        self.context = QCheckBox("Index each chunk with its note's title and headings (markdown chunker)")
        self.context.setChecked(settings.chunk.context)
        self.editor = QLineEdit(editor_command)
        self.editor.setPlaceholderText("e.g. code -g {path}:{line}   (empty: the system's default app)")
        self.editor.setToolTip(
            "{path}, {line} and {page} (a PDF's page; 1 for other notes) are filled in, e.g.\n"
            "code -g {path}:{line}   or   okular --page {page} {path}"
        )
        form.addRow("Note types", self.extensions)
        form.addRow("Ignore patterns", self.ignore)
        form.addRow("Skip files larger than", self.max_mb)
        form.addRow("", self.follow_links)
        form.addRow("Chunker", self.chunker)
        form.addRow("Chunk size", self.size)
        form.addRow("Overlap", self.overlap)
        form.addRow("Shortest chunk (share of size)", self.min_fill)
        form.addRow("", self.context)
        form.addRow("Editor command", self.editor)
        self.embedder = QLineEdit(embedder)
        self.embedder.setObjectName("embedderEdit")
        self.embedder.setPlaceholderText("e5 (multilingual), wordllama (English) or model2vec:/path, never downloaded")
        form.addRow("Embedding model", self.embedder)
        self.meaning_index = QCheckBox("Compute the meaning index after each build (for auto and hybrid search)")
        self.meaning_index.setObjectName("meaningIndexCheck")
        self.meaning_index.setChecked(meaning_index)
        form.addRow("", self.meaning_index)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #b00020")
        form.addRow(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._on_accepted)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.result_settings: IndexSettings | None = None

    def _on_accepted(self) -> None:
        exts = tuple(
            e if e.startswith(".") else "." + e for e in (x.strip() for x in self.extensions.text().split(",")) if e
        )
        try:
            chunk = ChunkOptions(
                self.chunker.currentText(),
                self.size.value(),
                self.overlap.value(),
                self.context.isChecked(),
                self.min_fill.value(),
            )
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        if not exts:
            self.error.setText("give at least one note type, e.g. .md")
            return
        ignore = tuple(x.strip() for x in self.ignore.toPlainText().splitlines() if x.strip())
        load = LoadOptions(exts, int(self.max_mb.value() * 1024 * 1024), ignore, self.follow_links.isChecked())
        self.result_settings = IndexSettings(load, chunk)
        self.accept()


class InstructionsDialog(QDialog):
    """Edit the prompt's instructions (saved), pick or save named templates, or reset to the defaults."""

    def __init__(self, text: str, templates: dict[str, str] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Prompt instructions")
        self.setObjectName("instructionsDialog")
        self.templates: dict[str, str] = {"Default": DEFAULT_INSTRUCTIONS, **(templates or {})}
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.template_combo = QComboBox(self)
        self.template_combo.setObjectName("instructionsTemplateCombo")
        self.template_combo.addItem("Templates…", None)
        for name in self.templates:
            self.template_combo.addItem(name, name)
        self.template_combo.activated.connect(self._on_template_activated)
        self.name_edit = QLineEdit(self)
        self.name_edit.setObjectName("templateNameEdit")
        self.name_edit.setPlaceholderText("name, to save these instructions as a template")
        save = QPushButton("Save as template", self)
        save.setObjectName("saveTemplateButton")
        save.clicked.connect(self.save_template)
        row.addWidget(self.template_combo)
        row.addWidget(self.name_edit, 1)
        row.addWidget(save)
        layout.addLayout(row)
        self.editor = QPlainTextEdit(text)
        self.editor.setObjectName("instructionsEdit")
        self.editor.setTabChangesFocus(True)
        layout.addWidget(self.editor)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        reset = QPushButton("Reset to default")
        reset.clicked.connect(lambda: self.editor.setPlainText(DEFAULT_INSTRUCTIONS))
        buttons.addButton(reset, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(660, 300)

    def _on_template_activated(self, index: int) -> None:
        name = self.template_combo.itemData(index)
        if name is not None:
            self.editor.setPlainText(self.templates[name])
            self.name_edit.setText("" if name == "Default" else name)

    def save_template(self) -> None:
        """Keep the text under the name typed (kept in settings when the dialog is accepted)."""
        name = self.name_edit.text().strip()
        if not name or name == "Default":
            self.name_edit.setPlaceholderText("type a name other than Default first")
            return
        if name not in self.templates:
            self.template_combo.addItem(name, name)
        self.templates[name] = self.editor.toPlainText()

    def user_templates(self) -> dict[str, str]:
        return {k: v for k, v in self.templates.items() if k != "Default"}


class AboutDialog(QDialog):
    """Version, and where the index cache and settings live, with a button to clear the cache."""

    def __init__(self, index_root: str, settings_file: str, clear_cache: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About ragdesk")
        self.setObjectName("aboutDialog")
        layout = QVBoxLayout(self)
        label = QLabel(
            f"<h3>ragdesk {__version__}</h3>"
            "<p>Find the right passage in your notes, see why it ranked, and paste it into a chat assistant "
            "as a well-built prompt.</p>"
            f"<p><b>Index cache:</b> {index_root}<br><b>Settings:</b> {settings_file}</p>"
        )
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.clear_button = QPushButton("Clear index cache")
        self.clear_button.setObjectName("clearCacheButton")
        self.status = QLabel("")

        def _clear() -> None:
            self.status.setText(clear_cache())

        self.clear_button.clicked.connect(_clear)
        layout.addWidget(self.clear_button)
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
