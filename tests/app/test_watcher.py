"""The folder watcher on a real folder: saves in place (what most editors do) are seen in any
folder; hidden folders, other files and reading notes are not changes."""

from __future__ import annotations

from pathlib import Path

from ragdesk.app.watcher import FolderWatcher

from ..conftest import write_notes


def test_saves_in_place_new_folders_and_removals_are_seen_and_nothing_else(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n", "sub/b.md": "# B\n", ".obsidian/workspace.json": "{}"})
    (notes / "index").mkdir()
    watcher = FolderWatcher()
    with qtbot.waitSignal(watcher.watch_started, timeout=5000):  # watches are added on a thread
        watcher.watch(str(notes), (".md",), ignore=notes / "index")  # an index folder kept inside the notes
    assert watcher.watching == notes and watcher.ready
    try:
        with qtbot.assertNotEmitted(watcher.folder_changed, wait=500):
            (notes / ".obsidian" / "workspace.json").write_text('{"open": 1}', encoding="utf-8")
            (notes / "picture.png").write_bytes(b"\x89PNG")
            (notes / "a.md").read_text(encoding="utf-8")  # the build reads notes: no change
            (notes / "index" / "gen-2").mkdir()  # each build publishes a generation folder
            (notes / "index" / "gen-2" / "notes.md").write_text("x", encoding="utf-8")
        assert watcher.take_changes() is None  # nothing named: a refresh would walk everything
        with qtbot.waitSignal(watcher.folder_changed, timeout=5000):
            with open(notes / "sub" / "b.md", "a", encoding="utf-8") as fh:  # appended in place
                fh.write("more\n")
        assert watcher.take_changes() == {str(notes / "sub" / "b.md")}  # the refresh looks at it alone
        with qtbot.waitSignal(watcher.folder_changed, timeout=5000):
            (notes / "later").mkdir()
        assert watcher.take_changes() is None  # a folder: the whole tree is walked
        with qtbot.waitSignal(watcher.folder_changed, timeout=5000):  # inside a folder made after watch()
            (notes / "later" / "c.md").write_text("# C\n", encoding="utf-8")
        with qtbot.waitSignal(watcher.folder_changed, timeout=5000):
            (notes / "a.md").unlink()
        assert watcher.take_changes() == {str(notes / "later" / "c.md"), str(notes / "a.md")}
        with qtbot.waitSignal(watcher.folder_changed, timeout=5000):
            (notes / "sub" / "b.md").rename(notes / "sub" / "moved.md")
        assert watcher.take_changes() == {str(notes / "sub" / "b.md"), str(notes / "sub" / "moved.md")}
        watcher.enabled = False  # the tests that drive refreshes themselves turn it off
        with qtbot.assertNotEmitted(watcher.folder_changed, wait=500):
            (notes / "sub" / "moved.md").write_text("# B again\n", encoding="utf-8")
    finally:
        watcher.clear()
    assert watcher.watching is None and not watcher.ready


def test_a_folder_that_cannot_be_watched_says_so_and_is_not_watching(qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The system's watch limit reached: one line saying to press F5, from the starting thread."""
    from watchdog.observers import Observer

    def refused(self):  # type: ignore[no-untyped-def]
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(Observer, "start", refused)
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n"})
    watcher = FolderWatcher()
    with qtbot.waitSignal(watcher.watch_failed, timeout=5000) as failed:
        watcher.watch(str(notes), (".md",))
    assert failed.args == [
        "Changes on disk are not watched ([Errno 28] inotify watch limit reached); press F5 after editing notes."
    ]
    assert watcher.watching is None and not watcher.ready
    watcher.clear()
