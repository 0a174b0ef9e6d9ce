"""Long use of the window: repainting for minutes must not wear anything down."""

from __future__ import annotations

import sys

from ragdesk.app.window import MainWindow

from .conftest import search


def test_repainting_results_keeps_none_alive(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """PySide6 6.12.0 dropped a reference to None on every Python-side index.data() answered with
    None; the delegates did that hundreds of times per repaint and Python 3.10/3.11 died with
    "none_dealloc" after ~15 minutes. 300 repaints of both tables must not lower None's count."""
    search(qtbot, window, "rebase history")
    assert window.results_model.rowCount() == 3 and window.breakdown_model.rowCount() > 10
    views = (window.results_view.viewport(), window.breakdown_view.viewport())
    for view in views:
        view.repaint()
    before = sys.getrefcount(None)
    for _ in range(300):
        for view in views:
            view.repaint()
    assert sys.getrefcount(None) >= before
