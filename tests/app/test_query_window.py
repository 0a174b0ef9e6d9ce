"""The query language in the window: the "Searched as" line, what did not parse, filters that
narrow the list, the prompt's question without them, the dates and the F1 help."""

from __future__ import annotations

from pathlib import Path

from ragdesk.app.actions import shortcuts_html
from ragdesk.core.query import SYNTAX

from ..conftest import write_notes
from .conftest import open_window, search

NOTES = {
    "git/rename.md": "---\ndate: 2025-11-03\ntags: [howto]\n---\n# Rename\n\nRename a git branch with git branch -m.\n",
    "git/rebase.md": "# Rebase\n\nAn interactive rebase rewrites a git branch.\n",
    "vim/branch.md": "# Branches\n\nA vim branch of the undo tree is not a git branch.\n",
}


def test_searched_as_line_filters_and_the_prompt_question(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    w = open_window(make_window, qtbot, write_notes(tmp_path / "n", NOTES))
    label = w.results_pane.searched_as_label
    result = search(qtbot, w, "git branch")
    assert len(result.hits) == 3 and label.isHidden() and label.text() == ""
    result = search(qtbot, w, "git branch path:git -interactive")
    assert [h.path for h in result.hits] == ["git/rename.md"]
    assert label.isVisible()
    assert label.text() == "Searched as: words: git branch; left out: interactive; only notes with folder git"
    assert w.results_pane.match_count_label.text() == "1 of 1 matches"
    prompt = w.prompt_pane.preview.toPlainText()
    assert "git branch" in prompt and "path:git" not in prompt and "interactive" not in prompt.split("Question:")[-1]
    assert "· 2025-11-03" in w.explanation_pane.chunk_title.text()  # front matter's date, not the file's
    result = search(qtbot, w, "branch path: x")
    assert label.text() == "path: needs a folder name: searched as words"
    result = search(qtbot, w, "tag:howto")
    assert [h.path for h in result.hits] == ["git/rename.md"] and result.listed
    assert label.text() == "Searched as: only notes with tag howto (newest first)"


def test_f1_help_and_the_field_teach_the_language(window) -> None:  # type: ignore[no-untyped-def]
    help_html = shortcuts_html()
    assert all(spelling.split()[0].replace('"', "&quot;") in help_html for spelling, _ in SYNTAX)
    tip = window.search_bar.field.toolTip()
    assert all(spelling in tip for spelling, _ in SYNTAX)


def test_sort_newest_orders_by_the_notes_dates_and_says_them(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    import os

    folder = write_notes(tmp_path / "n", NOTES)
    old = 1_600_000_000 * 10**9  # 2020-09: older than rename.md's front-matter date
    os.utime(folder / "vim" / "branch.md", ns=(old, old))
    w = open_window(make_window, qtbot, folder)
    best = search(qtbot, w, "git branch")
    assert best.sort == "relevance"
    with qtbot.waitSignal(w.results_shown, timeout=10000) as shown:
        w.results_pane.sort_combo.setCurrentIndex(w.results_pane.sort_combo.findData("newest"))
    result = shown.args[0]
    assert result.sort == "newest"
    assert [h.path for h in result.hits] == ["git/rebase.md", "git/rename.md", "vim/branch.md"]
    titles = [w.results_pane.model.title_text(row) for row in range(3)]
    assert titles[1].endswith("· 2025-11-03") and titles[2].endswith("· 2020-09-13")


def test_path_and_tag_complete_from_the_index(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    w = open_window(make_window, qtbot, write_notes(tmp_path / "n", NOTES))
    field, completer = w.search_bar.field, w.search_bar.completer
    field.setFocus()
    qtbot.keyClicks(field, "branch -path:v")  # asks the search thread for the folders and tags once
    qtbot.waitUntil(lambda: completer.values is not None, timeout=10000)
    assert completer.values == {"path": ["git", "vim"], "tag": ["howto"]}
    popup = completer.completer.popup()
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    assert [completer.completer.completionModel().index(i, 0).data() for i in range(popup.model().rowCount())] == [
        "path:vim"
    ]
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert field.text() == "branch -path:vim "
    field.setText("")
    qtbot.keyClicks(field, "tag:h")
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert field.text() == "tag:howto "
