"""Starting the window: QApplication, settings, and which folder to open first."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from .. import __version__
from .resources import app_icon, sample_notes_folder
from .settings import AppSettings
from .window import MainWindow


def initial_folder(requested: str | None, settings: AppSettings) -> str:
    """The folder given, else the last one opened, else the bundled sample notes."""
    if requested:
        return requested
    last = settings.last_folder
    if last and Path(last).is_dir():
        return last
    return str(sample_notes_folder())


def run(folder: str | None = None, index_dir: str | None = None, settings_path: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("ragdesk")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("ragdesk")
    app.setDesktopFileName("io.github.ragdesk.ragdesk")
    app.setWindowIcon(app_icon())
    settings = AppSettings(settings_path)
    window = MainWindow(settings, index_dir)
    window.show()
    window.open_folder(initial_folder(folder, settings))
    return app.exec()
