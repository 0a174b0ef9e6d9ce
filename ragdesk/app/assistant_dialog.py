"""Help › Connect an assistant…: the configuration that lets a chat assistant search these notes
through `ragdesk mcp`, per client, with the absolute command of this installation and a Copy button."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.assistant_setup import client_setups, server_command


class ConnectAssistantDialog(QDialog):
    """Pick the assistant; its configuration is shown, where it goes is said, Copy puts it on the clipboard."""

    def __init__(self, folder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect an assistant")
        self.setObjectName("connectAssistantDialog")
        self.setups = client_setups(server_command(folder))
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Assistants that run local MCP servers (Claude, VS Code, Cursor, LM Studio) can search this folder "
            "with ragdesk: the same ranking and explanations, secrets redacted, notes read only. "
            "Nothing leaves this computer but what the assistant asks for."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.client_combo = QComboBox(self)
        self.client_combo.setObjectName("assistantClientCombo")
        for setup in self.setups:
            self.client_combo.addItem(setup.client)
        layout.addWidget(self.client_combo)
        self.where = QLabel(self)
        self.where.setObjectName("assistantConfigWhere")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.where)
        self.config = QPlainTextEdit(self)
        self.config.setObjectName("assistantConfig")
        self.config.setReadOnly(True)
        self.config.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout.addWidget(self.config)
        self.copy_button = QPushButton("&Copy", self)
        self.copy_button.setObjectName("copyAssistantConfig")
        self.copied = QLabel("", self)
        self.copied.setObjectName("assistantConfigCopied")
        layout.addWidget(self.copy_button)
        layout.addWidget(self.copied)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.client_combo.currentIndexChanged.connect(self._on_client_combo_current_index_changed)
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.resize(640, 420)
        self._on_client_combo_current_index_changed(0)

    def _on_client_combo_current_index_changed(self, index: int) -> None:
        setup = self.setups[max(0, index)]
        self.where.setText(f"Where: {setup.where}")
        self.config.setPlainText(setup.text)
        self.copied.setText("")

    def _on_copy_button_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.config.toPlainText())
        self.copied.setText(f"Copied the {self.client_combo.currentText()} configuration.")
