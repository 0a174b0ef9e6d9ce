"""The window under changing folders and refreshes: builds of left folders stop, pins and unticks
follow their passage, and errors that used to be swallowed are shown."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from ragdesk.app.models import ResultsModel
from ragdesk.app.window import MainWindow
from ragdesk.core import fileio, store
from ragdesk.core.analyzers import AnalyzerConfig

from ..conftest import write_notes
from .conftest import open_window, search


def test_switching_folders_mid_build_stops_the_old_build(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    body = " ".join(f"word{i}" for i in range(250))
    big = write_notes(tmp_path / "big", {f"n{i:05d}.md": f"# Big {i}\n\n{body}\n" for i in range(6000)})
    small = write_notes(tmp_path / "small", {"only.md": "# Only\n\nthe small folder's apples\n"})
    w: MainWindow = make_window()
    with qtbot.waitSignal(w.engine.builder.progress_changed, timeout=30000, check_params_cb=lambda msg: msg.done > 0):
        w.open_folder(str(big))
    states: list[str] = []
    w.build_state_changed.connect(states.append)
    with qtbot.waitSignal(w.library_loaded, timeout=30000):
        w.open_folder(str(small))
    qtbot.waitUntil(lambda: not w.engine.building, timeout=30000)
    assert w.library is not None and w.library.note_paths == ["only.md"]
    assert states[-1] == "built" and "cancelled" not in states  # the user sees the new folder's build only
    assert "Indexing n" not in w.statusBar().currentMessage()
    # Nothing of the abandoned folder was published: every generation left is the small folder's.
    root = Path(w.index_dir)
    folders = {json.loads((g / "manifest.json").read_text())["folder"] for g in root.glob("gen-*")}
    assert folders == {str(small.resolve())}


def test_pins_and_unticks_follow_their_passage(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    result = search(qtbot, window, "rebase history")
    assert [h.heading for h in result.hits] == ["Git › Rebase", "Clip", "Git › Merge"]
    window.results_pane.view.selectRow(2)
    window.toggle_pin()
    assert window.pinned is not None and window.pinned.heading == "Git › Merge"
    model = window.results_pane.model
    model.setData(model.index(1, ResultsModel.COL_USE), Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    # A new note sorts before git.md: every chunk id after it shifts by one.
    (notes / "a-first.md").write_text("# First\n\nunrelated words about apples\n", encoding="utf-8")
    with qtbot.waitSignal(window.library_loaded, timeout=20000):
        window.refresh()
    qtbot.waitUntil(lambda: not window.engine.building, timeout=20000)
    result = search(qtbot, window, "rebase history")
    merge = next(h for h in result.hits if h.heading == "Git › Merge")
    assert window.pinned is not None and window.pinned.chunk_id == merge.chunk_id
    assert [h.heading for h in model.included_hits()] == ["Git › Rebase", "Git › Merge"]  # Clip still unticked
    # Another folder: no pin, nothing unticked.
    other = write_notes(notes.parent / "other", {"x.md": "# X\n\nrebase history again\n"})
    with qtbot.waitSignal(window.library_loaded, timeout=20000):
        window.open_folder(str(other))
    assert window.pinned is None and model.excluded == set()


def test_unpinned_with_a_word_when_the_passage_changed(window: MainWindow, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    window.results_pane.view.selectRow(1)
    window.toggle_pin()
    assert window.pinned is not None and window.pinned.path == "clip.md"
    (notes / "clip.md").write_text("# Clip\n\nA different text now, about rebase.\n", encoding="utf-8")
    with qtbot.waitSignal(window.library_loaded, timeout=20000):
        window.refresh()
    assert window.pinned is None
    assert window.statusBar().currentMessage() == "Unpinned clip.md: that passage changed on disk."


def test_unreadable_ignore_file_stops_the_build(make_window, notes: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    (notes / ".ragdeskignore").mkdir()  # exists, cannot be read as a file (root reads every file)
    w: MainWindow = make_window()
    with qtbot.waitSignal(w.build_state_changed, timeout=20000, check_params_cb=lambda s: s == "failed"):
        w.open_folder(str(notes))
    assert w.library is None
    message = w.statusBar().currentMessage()
    assert "cannot read" in message and ".ragdeskignore" in message and "Is a directory" in message


def test_clearing_the_cache_removes_it_and_reindexes(window: MainWindow, monkeypatch, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The About dialog's Clear cache, for real: the cache goes, its size is said, the folder is re-indexed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the default cache, here and in the build process
    monkeypatch.setattr(window.session, "index_dir", None)
    root = window.index_root()
    assert root == tmp_path / "cache" / "ragdesk" / "indexes"
    with qtbot.waitSignal(window.build_state_changed, timeout=20000, check_params_cb=lambda s: s == "built"):
        window.refresh()
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    assert size > 0
    with qtbot.waitSignal(window.build_state_changed, timeout=20000, check_params_cb=lambda s: s == "built"):
        message = window.clear_index_cache()
        assert not any(root.rglob("*.npy"))  # gone before the rebuild writes anew
    assert message == f"Cleared {size / 1e6:.1f} MB; the open folder is being re-indexed."
    assert any(root.rglob("*.npy")) and window.library is not None and window.library.n_chunks == 4


def test_cache_that_cannot_be_cleared_says_so(window: MainWindow, monkeypatch, qtbot) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(window.session, "index_dir", None)
    root = Path(window.index_root())
    monkeypatch.setattr(store, "default_index_root", lambda: root)
    monkeypatch.setattr(fileio, "remove_tree", lambda path: [f"{path}/gen-1/notes.npy: Device or resource busy"])
    message = window.clear_index_cache()
    assert message.startswith("Could not clear the whole cache: 1 item(s) remain in ")
    assert "notes.npy: Device or resource busy" in message
    qtbot.waitUntil(lambda: not window.engine.building, timeout=20000)


def test_rank_lookup_failure_is_shown(window: MainWindow, monkeypatch, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    lib = window.library
    assert lib is not None

    def damaged(*_args: object, **_kwargs: object) -> None:
        raise store.IndexDamaged("index file docs.npy fails its checksum")

    monkeypatch.setattr(type(lib.searcher), "rank_of", damaged)
    window.results_pane.view.selectRow(1)
    qtbot.waitUntil(lambda: "not available" in window.explanation_pane.ranks_label.text(), timeout=10000)
    assert window.explanation_pane.ranks_label.text() == (
        "Rank under each analyzer — not available: index file docs.npy fails its checksum"
    )


def test_ranks_under_an_analyzer_not_derived_are_not_derived_in_the_window(  # type: ignore[no-untyped-def]
    window: MainWindow, monkeypatch, qtbot
) -> None:
    """On a large folder, the words index (not part of the default analyzer) would take the window's
    search thread seconds to derive; the ranks line says so instead (the build process derives it in
    its background phase), and the words analyzer's other indexes are untouched."""
    from ragdesk.core import segment

    monkeypatch.setattr(segment, "PARALLEL_DERIVE_POSTINGS", 0)  # every folder counts as large
    search(qtbot, window, "rebase history")
    window.results_pane.view.selectRow(1)
    qtbot.waitUntil(lambda: "trigrams:" in window.explanation_pane.ranks_label.text(), timeout=10000)
    text = window.explanation_pane.ranks_label.text()
    assert text.startswith("Rank under each analyzer — words: not indexed yet · stems: ")
    assert "not indexed yet" not in text.split("·", 1)[1]  # stems, trigrams and combined are ranked
    lib = window.library
    assert lib is not None and not lib.segments[0].ready(AnalyzerConfig("words"))


def test_a_pdf_result_is_cited_by_page(make_window, tmp_path: Path, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from ..core.pdfs import render_pdf, unicode_font

    if unicode_font() is None:
        pytest.skip("no DejaVuSans.ttf to render a test PDF")
    folder = tmp_path / "pdfs"
    words = "river stone cloud field harbour lantern meadow orchard valley bridge".split()
    body = "\n".join(f"This paragraph talks about the {a} and the {b}." for a in words for b in words)
    pages = render_pdf(body + "\nThe zanzibar clause is on the last page.", folder / "report.pdf", header="Report")
    w = open_window(make_window, qtbot, folder)
    qtbot.waitUntil(lambda: not w.engine.building, timeout=20000)
    result = search(qtbot, w, "zanzibar clause")
    assert result.hits[0].page == pages
    source = w.results_pane.model.index(0, ResultsModel.COL_SOURCE).data()
    assert source == f"report.pdf › p. {pages}  · {result.hits[0].date_text}"  # the note's date last
    assert f"· p. {pages} · score" in w.explanation_pane.chunk_title.text()
    assert f"[1] (report.pdf › p. {pages})" in w.prompt_pane.preview.toPlainText()
    started: list[list[str]] = []
    detached = lambda program, args: (started.append([program, *args]) or True, 1)  # noqa: E731
    monkeypatch.setattr("ragdesk.app.note_opener.QProcess.startDetached", detached)
    w.settings.set("editor/command", "okular --page {page} {path}")
    w.open_current_note()
    assert started == [["okular", "--page", str(pages), str(folder.resolve() / "report.pdf")]]


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_closes_the_window_and_saves_its_layout(window: MainWindow, qtbot, sig: int) -> None:  # type: ignore[no-untyped-def]
    """A logout's SIGTERM or the terminal's Ctrl+C closes the window as its close button does (the
    layout saved, the build process stopped): before, SIGTERM ended the process mid-stride and
    Ctrl+C did nothing until some Python code ran."""
    from ragdesk.app.stop_signals import close_on_stop_signals

    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    on_disk = lambda: QSettings(window.settings.file_name, QSettings.Format.IniFormat).contains("window/geometry")  # noqa: E731
    assert not on_disk()
    restore = close_on_stop_signals(window)
    try:
        # an event loop with no Python of its own in it, as app.exec(): the wake-up fd must wake it
        loop = QEventLoop()
        window.windowHandle().visibleChanged.connect(loop.quit)  # C++ to C++: no Python runs
        QTimer.singleShot(5000, loop.quit)
        started = time.monotonic()
        os.kill(os.getpid(), sig)
        loop.exec()
        assert not window.isVisible() and time.monotonic() - started < 2
    finally:
        restore()
    assert on_disk()
    assert not window.engine.building
    assert signal.getsignal(sig) is not None and signal.set_wakeup_fd(-1) == -1  # handlers and fd given back
