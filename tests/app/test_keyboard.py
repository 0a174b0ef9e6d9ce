"""The window from the keyboard: Tab and F6 leave the tables, Space ticks Use; truthful summary lines;
term colours distinct in query order."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from ragdesk.app.highlight import term_color
from ragdesk.app.models import ResultsModel
from ragdesk.app.window import MainWindow

from .conftest import search


def test_tab_and_f6_leave_the_results(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    window.results_pane.view.setFocus()
    qtbot.waitUntil(window.results_pane.view.hasFocus, timeout=2000)
    qtbot.keyClick(window.results_pane.view, Qt.Key.Key_Tab)
    assert not window.results_pane.view.hasFocus()  # Tab walked cell by cell and never left before
    window.results_pane.view.setFocus()
    window.focus_next_pane()
    assert QApplication.focusWidget() is window.explanation_pane.breakdown_view
    window.focus_next_pane()
    assert QApplication.focusWidget() is window.prompt_pane.k_spin
    window.focus_next_pane(backwards=True)
    assert QApplication.focusWidget() is window.explanation_pane.breakdown_view


def test_space_toggles_use(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    window.results_pane.view.setFocus()
    window.results_pane.view.selectRow(1)
    qtbot.keyClick(window.results_pane.view, Qt.Key.Key_Space)
    use = window.results_pane.model.index(1, ResultsModel.COL_USE)
    assert window.results_pane.model.data(use, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    assert [h.heading for h in window.results_pane.model.included_hits()] == ["Git › Rebase", "Git › Merge"]
    qtbot.keyClick(window.results_pane.view, Qt.Key.Key_Space)
    assert len(window.results_pane.model.included_hits()) == 3


def test_summary_states_what_it_sums(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    hit = window.current_hit()
    assert hit is not None
    total = sum(r.contribution for r in hit.explain)
    assert window.explanation_pane.stats_label.text().endswith(f"BM25 score = Σ contributions = {total:.3f}")


def test_term_colours_are_distinct_in_query_order(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.search_bar.analyzer_combo.setCurrentText("stems")
    search(qtbot, window, "undo git commit rebase history")
    colors = [term_color(t).name() for t in ("undo", "git", "commi", "rebas", "histo")]
    assert len(set(colors)) == 5
