"""The session under stress: builds queued behind a running one, a build process that dies, and
the editor command that opens a result."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ragdesk.app import workers
from ragdesk.app.window import MainWindow

from .conftest import search


def die(_job: object, _queue: object, _cancel: object) -> None:
    """A build process that ends without a word, as a crash in native code or a kill would."""
    os._exit(3)


def test_builds_asked_for_during_a_build_run_once_after_it(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.watcher.enabled = False
    started: list[str] = []
    window.session.build_started.connect(lambda: started.append(window.folder or ""))
    ended: list[str] = []
    window.build_state_changed.connect(lambda state: ended.append(state) if state != "building" else None)
    window.refresh()
    assert window.engine.building
    for _ in range(3):  # three more while the first runs: only the newest waits, and it runs once
        window.refresh()
    qtbot.waitUntil(lambda: ended == ["built"], timeout=30000)
    assert len(started) == 2 and not window.engine.building
    assert window.session._pending is None


def test_a_build_process_that_dies_is_reported_and_the_index_kept(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, monkeypatch
) -> None:
    before = window.library
    monkeypatch.setattr(workers, "build_job", die)
    with qtbot.waitSignal(window.build_state_changed, timeout=30000, check_params_cb=lambda s: s != "building") as got:
        window.refresh()
    assert got.args == ["failed"]
    assert window.statusBar().currentMessage() == (
        "Indexing failed: the indexing process stopped unexpectedly (exit code 3). The previous index is still in use."
    )
    assert window.library is before and not window.progress.isVisible()
    assert search(qtbot, window, "rebase history").hits  # still searchable


def test_the_editor_command_gets_the_path_line_and_page(window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "opened.txt"
    script = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(chr(124).join(sys.argv[2:]))"
    window.settings.set("editor/command", f'{sys.executable} -c "{script}" {out} {{path}} +{{line}} --page={{page}}')
    search(qtbot, window, "merge keeps history")
    hit = window.current_hit()
    assert hit is not None and hit.path == "git.md"
    window.open_current_note()
    qtbot.waitUntil(out.exists, timeout=10000)
    qtbot.waitUntil(lambda: out.read_text() != "", timeout=10000)
    assert out.read_text() == f"{Path(window.folder or '') / 'git.md'}|+{hit.start_line}|--page=1"


def test_an_editor_command_that_cannot_run_says_so(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.settings.set("editor/command", "/nonexistent/editor {path}")
    search(qtbot, window, "rebase history")
    window.open_current_note()
    assert window.statusBar().currentMessage() == "Could not run the editor command: /nonexistent/editor {path}"
