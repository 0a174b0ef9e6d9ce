"""What the window keeps between runs: each pane's choices, its geometry and its splitters' sizes,
with sizes that suit the screen on a first start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter

if TYPE_CHECKING:
    from .window import MainWindow


def _splitters(window: MainWindow) -> tuple[tuple[str, QSplitter], ...]:
    return (
        ("window/main_splitter", window.main_splitter),
        ("window/right_splitter", window.right_splitter),
        ("window/why_splitter", window.explanation_pane.splitter),
    )


def restore(window: MainWindow) -> None:
    s = window.settings
    for pane in (window.search_bar, window.prompt_pane, window.results_pane):
        pane.restore(s)
    geometry = s.get("window/geometry", None, QByteArray)
    if geometry is None or not window.restoreGeometry(geometry):
        screen = QGuiApplication.primaryScreen()
        area = screen.availableGeometry() if screen is not None else None
        width = min(1400, int(area.width() * 0.9)) if area is not None else 1280  # suits the screen
        height = min(900, int(area.height() * 0.9)) if area is not None else 800
        window.resize(width, height)
        window.main_splitter.setSizes([width * 11 // 20, width * 9 // 20])  # the results win space
        window.right_splitter.setSizes([520, 280])
        window.explanation_pane.splitter.setSizes([150, 370])
    for key, splitter in _splitters(window):
        state = s.get(key, None, QByteArray)
        if state is not None:
            splitter.restoreState(state)


def save(window: MainWindow) -> None:
    s = window.settings
    for pane in (window.search_bar, window.prompt_pane, window.results_pane):
        pane.save(s)
    s.set("window/geometry", window.saveGeometry())
    for key, splitter in _splitters(window):
        s.set(key, splitter.saveState())
    s.sync()
