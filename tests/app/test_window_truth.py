"""The window tells the truth and forgets what is over: counts of matches, notes of the last query or
folder, pins, Reset, and failures that used to be silent."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from ragdesk.app.results_pane import RESULTS_K
from ragdesk.app.window import MainWindow
from ragdesk.core.bm25 import DEFAULT_B, DEFAULT_K1

from ..conftest import write_notes
from .conftest import open_window, search


def test_list_says_how_many_match_and_shows_more(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "n", {f"n{i:02d}.md": f"# Note {i}\n\napples number {i}\n" for i in range(45)})
    w: MainWindow = make_window()
    w.search_bar.analyzer_combo.setCurrentText("words")
    with qtbot.waitSignal(w.library_loaded, timeout=20000):
        w.open_folder(str(folder))
    result = search(qtbot, w, "apples")
    assert len(result.hits) == RESULTS_K and w.results_pane.match_count_label.text() == f"{RESULTS_K} of 45 matches"
    assert w.results_pane.show_more_button.isVisible()
    with qtbot.waitSignal(w.results_shown, timeout=10000) as more:
        qtbot.mouseClick(w.results_pane.show_more_button, Qt.MouseButton.LeftButton)
    assert len(more.args[0].hits) == 45 and w.results_pane.match_count_label.text() == "45 of 45 matches"
    assert not w.results_pane.show_more_button.isVisible()


def test_notes_of_the_last_query_and_folder_go(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "n", {"a.md": "# A\n\napples and pears\n"})
    w = open_window(make_window, qtbot, folder)
    search(qtbot, w, "apples zzzq")
    assert w.statusBar().currentMessage() == "Note: not in the notes: zzzq"
    search(qtbot, w, "pears")
    assert w.statusBar().currentMessage() == ""
    w.results_pane.empty_label.setText("Welcome! …")
    w.results_pane.empty_label.show()
    other = write_notes(tmp_path / "m", {"b.md": "# B\n\nplums\n"})
    with qtbot.waitSignal(w.library_loaded, timeout=20000):
        w.open_folder(str(other))
    assert not w.results_pane.empty_label.text().startswith("Welcome")


def test_ctrl_p_pins_the_selection(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    window.results_pane.view.selectRow(0)
    window.toggle_pin()
    first = window.pinned
    window.results_pane.view.selectRow(2)
    window.toggle_pin()  # pins the selected one (it used to unpin the old pin)
    assert first is not None and window.pinned is not None and window.pinned.key != first.key
    window.toggle_pin()  # the selected one is pinned: unpin
    assert window.pinned is None


def test_reset_resets_every_ranking_setting(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.search_bar.analyzer_combo.setCurrentText("words")
    window.search_bar.fold_accents_check.setChecked(True)
    window.search_bar.k1_spin.setValue(2.0)
    window.search_bar.b_spin.setValue(0.3)
    window.findChild(type(window.results_pane.show_more_button), "resetParamsButton").click()
    bar = window.search_bar
    assert bar.analyzer_combo.currentText() == "combined" and not bar.fold_accents_check.isChecked()
    params = (bar.k1_spin.value(), bar.b_spin.value(), bar.mode_combo.currentIndex())
    assert params == (DEFAULT_K1, DEFAULT_B, 0)


def test_a_folder_without_notes_says_what_was_looked_for(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "pics", {"a.png": b"\x89PNG..", "b.jpg": b"\xff\xd8\xff", "c.csv": "x,y"})
    w = open_window(make_window, qtbot, folder)
    search(qtbot, w, "anything")
    text = w.results_pane.empty_label.text()
    assert text.startswith("No notes found in this folder (looked for .md, .markdown, .txt, .rst, …; 3 other files")
    assert "none of the query terms" not in text


def test_a_folder_without_notes_is_walked_once_and_never_in_the_windows_thread(  # type: ignore[no-untyped-def]
    make_window, tmp_path: Path, qtbot, monkeypatch
) -> None:
    """Counting the other files walks up to 100,000 of them: it ran in the GUI thread on every search."""
    import threading

    from ragdesk.app import search_worker

    counted: list[threading.Thread] = []
    count = search_worker.count_other_files

    def counting(folder, extensions):  # type: ignore[no-untyped-def]
        counted.append(threading.current_thread())
        return count(folder, extensions)

    monkeypatch.setattr(search_worker, "count_other_files", counting)
    folder = write_notes(tmp_path / "pics", {"a.png": b"\x89PNG..", "sub/b.jpg": b"\xff\xd8\xff", ".hidden": "x"})
    w = open_window(make_window, qtbot, folder)
    search(qtbot, w, "anything")
    search(qtbot, w, "something else")
    assert "2 other files" in w.results_pane.empty_label.text()
    assert len(counted) == 1 and counted[0] is not threading.main_thread()


def test_open_in_editor_without_an_editor_says_so(window: MainWindow, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    monkeypatch.setattr("ragdesk.app.note_opener.QDesktopServices.openUrl", lambda url: False)
    window.open_current_note()
    assert (
        window.statusBar()
        .currentMessage()
        .startswith("No editor command is set, and the system has no app to open git.md. Set one in Settings (Ctrl+,)")
    )


def test_a_missing_folder_from_a_launcher_opens_the_window_with_the_message(make_window, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    w = open_window(make_window, qtbot, notes)
    w.show_missing_folder("/nope")
    assert w.statusBar().currentMessage() == (
        f"The folder /nope does not exist or cannot be read; showing {notes.resolve()} instead."
    )


def test_cli_opens_the_window_for_a_missing_folder(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.app import main as app_main
    from ragdesk.cli import main

    calls: list[tuple] = []
    monkeypatch.setattr(app_main, "run", lambda folder, index_dir, missing=None: calls.append((folder, missing)) or 0)
    assert main(["/nope/notes"]) == 0
    assert calls == [(None, "/nope/notes")]
    assert capsys.readouterr().err == "ragdesk: error: notes folder not found: /nope/notes\n"


def test_results_show_the_best_passage_and_group_by_note(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.app.highlight import SNIPPET_CHARS
    from ragdesk.app.models import ResultsModel

    filler = " ".join(f"filler{i}" for i in range(70))
    notes = {
        "long.md": f"# Long\n\n{filler}\n\nThe zebra crossing rule is here.\n\n{filler}\n\n"
        f"## Again\n\nzebra again {filler}\n",
        "short.md": "# Short\n\nA zebra note.\n",
    }
    folder = write_notes(tmp_path / "n", notes)
    w = open_window(make_window, qtbot, folder)
    result = search(qtbot, w, "zebra crossing")
    model = w.results_pane.model
    long_row = next(i for i, h in enumerate(model.hits) if "crossing" in h.text)
    html_text = model.snippet_html(long_row)
    assert '">crossing</span>' in html_text and html_text.startswith("<b>long.md › Long :")
    assert "</b><br>… " in html_text
    assert len(html_text) < 3 * SNIPPET_CHARS  # a passage, not the whole chunk
    assert w.results_pane.view.rowHeight(0) >= 3 * w.results_pane.view.fontMetrics().lineSpacing()
    n_long = sum(1 for h in result.hits if h.path == "long.md")
    assert n_long >= 2
    w.results_pane.group_check.setChecked(True)
    assert [h.path for h in model.hits].count("long.md") == 1 and len(model.hits) == 2
    source = model.index([h.path for h in model.hits].index("long.md"), ResultsModel.COL_SOURCE).data()
    assert source.endswith(f"(+{n_long - 1} more in this note)  · {model.hits[0].date_text}")  # then its date
    assert len(model.included_hits()) == 2  # the prompt takes what is shown
    w.results_pane.group_check.setChecked(False)
    assert len(model.hits) == len(result.hits)
