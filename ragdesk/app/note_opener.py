"""Opening a result's note where a person edits it: the editor command of Settings at the chunk's
line (or a PDF's page), else the system's app for the file, else a message offering Settings."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox

from .session import ERROR_MS, NORMAL_MS

EDITOR_HINT = "code -g {path}:{line}"


def editor_args(command: str, path: Path, line: int, page: int) -> list[str]:
    """The command's words with {path}, {line} and {page} filled in (e.g. code -g {path}:{line})."""
    fill = {"{path}": str(path), "{line}": str(line), "{page}": str(page)}
    args = []
    for arg in shlex.split(command):
        for key, value in fill.items():
            arg = arg.replace(key, value)
        args.append(arg)
    return args


def open_note(window: Any, path: Path, line: int, page: int) -> None:
    """Open `path` for `window` (a MainWindow: its settings, status bar and Settings dialog)."""
    command = window.settings.editor_command
    if command:  # e.g. code -g {path}:{line}, or evince --page-index={page} {path} for PDFs
        args = editor_args(command, path, line, page)
        started, _pid = QProcess.startDetached(args[0], args[1:]) if args else (False, 0)  # (ok, pid)
        if not started:
            window._show_error(f"Could not run the editor command: {command}")
        return
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        window.statusBar().showMessage(
            f"Opened {path.name} in the system's app for it; to open notes at their line, set an editor "
            f"command in Settings (Ctrl+,), e.g. {EDITOR_HINT}",
            NORMAL_MS + 2000,
        )
        return
    _offer_editor_setting(window, path)


def _offer_editor_setting(window: Any, path: Path) -> None:
    """No editor command and no app for the file: say so, and offer Settings (Ctrl+Return was silent)."""
    message = (
        f"No editor command is set, and the system has no app to open {path.name}. Set one in "
        f"Settings (Ctrl+,), e.g. {EDITOR_HINT} or gedit +{{line}} {{path}}."
    )
    window.statusBar().showMessage(message, ERROR_MS)
    if os.environ.get("RAGDESK_NO_DIALOGS"):
        return
    answer = QMessageBox.question(
        window,
        "Open in editor",
        message + "\n\nOpen Settings now?",
        QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
    )
    if answer == QMessageBox.StandardButton.Open:
        window.dialogs.edit_settings()
