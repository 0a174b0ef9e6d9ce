"""The open folder and everything that keeps its index current: the build engine, the folder watcher,
the one build waiting behind the running one, and recovery from a damaged index.

The window asks (`open`, `refresh`, `cancel_build`, `recover`) and shows what the signals say; it
never touches the engine's build side itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from ..core import fileio, store
from ..core.analyzers import AnalyzerConfig
from ..core.dense import embedder_name
from ..core.errors import GenerationReplaced
from ..core.jobs import EmbeddingProgress, MeaningIndexed, Progress, duration
from ..core.modes import asks_meaning
from ..core.reader import IndexReader
from ..core.store import IndexDamaged
from .child_process import describe
from .settings import AppSettings
from .watcher import FolderWatcher
from .workers import BuildOutcome, BuildRequest, Engine

# How long the status bar keeps each kind of line (ms).
SHORT_MS, NORMAL_MS, LONG_MS, ERROR_MS = 3000, 6000, 10000, 15000
KEPT = " The previous index is still in use."
REPLACED_LINE = "Another ragdesk process updated this folder's index: opening it; the meaning index goes on there"
# After a refresh that looked only at the paths the watcher named, the whole folder is walked this
# long after the build process is idle (quietly: said only when it finds what the watcher missed).
CHECK_DELAY_MS = 1000


class Session(QObject):
    """One notes folder at a time, and the index the window searches."""

    build_started = Signal()
    build_stopped = Signal()  # any build ended (of this folder or one left); a queued one may start next
    build_progressed = Signal(object)  # Progress | EmbeddingProgress of the open folder's build
    index_changed = Signal(object)  # IndexReader: the one to search from now on
    build_ended = Signal(str, str)  # "built" / "failed" / "cancelled", and the line that says how
    meaning_indexed = Signal(object)  # core.jobs.MeaningIndexed: hybrid search can run (auto mode)
    status = Signal(str, int)  # a line for the status bar and how long it stays (ms; 0: until replaced)

    def __init__(
        self,
        settings: AppSettings,
        index_dir: str | None,
        wants: Callable[[], tuple[AnalyzerConfig, str]],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.index_dir = index_dir
        self._wants = wants  # the analyzer the window searches with, and the mode asked for
        self.folder: str | None = None
        self.library: IndexReader | None = None
        self._pending: BuildRequest | None = None
        self.embedding = False  # the build process is computing the meaning index (BM25 is published)
        self._building_folder: str | None = None  # the folder of the build under way
        # time.monotonic() from which the build under way reads the folder: when it was started, then
        # when its walk began (a change that reached the watcher before that is in it)
        self._read_from = 0.0
        self._pending_watch = False  # the waiting request came from the watcher alone (no F5)
        self._verified_generation: Path | None = None  # the generation last checked after a damaged search
        self._running: BuildRequest | None = None
        self._check_due = False  # a watched refresh looked at its paths alone, or failed: walk the folder later
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_DELAY_MS)
        self._check_timer.timeout.connect(self._on_check_timer_timeout)
        self.watcher = FolderWatcher(self)
        self.watcher.folder_changed.connect(self._on_folder_changed)
        self.watcher.watch_failed.connect(self._on_watch_failed)
        self.engine = Engine(self)
        builder = self.engine.builder
        builder.progress_changed.connect(self._on_progress_changed)
        builder.index_opened.connect(self._on_index_opened)
        builder.index_built.connect(self._on_index_built)
        builder.meaning_indexed.connect(self._on_meaning_indexed)
        builder.index_replaced.connect(self._on_index_replaced)
        builder.build_failed.connect(self._on_build_failed)
        builder.build_cancelled.connect(self._on_build_cancelled)

    def open(self, folder: str) -> None:
        """Make `folder` (an existing directory) the open one and start indexing it."""
        self.folder = str(Path(folder).resolve())
        if self.engine.building and self._building_folder != self.folder:
            self.engine.cancel_build()  # the folder being indexed was left: that build publishes nothing
        self.watcher.clear()
        self.library = None
        self.settings.remember_folder(self.folder)
        self.refresh()

    def _showing(self) -> IndexReader | None:
        """The index shown now, when it is of the open folder (a build need not map it again)."""
        return self.library if self.library is not None and self.library.folder == Path(self.folder or "") else None

    def refresh(
        self,
        verify: bool = False,
        watched: bool = False,
        changed: frozenset[str] | None = None,
        read_from: float = 0.0,
        quiet: bool = False,
    ) -> None:
        """Re-read new and changed notes in the build process; the current index stays searchable.
        With `verify`, the stored files' checksums are checked first and a damaged index is rebuilt.
        While a build runs, the request waits (one, merged with any waiting before) and starts when
        that build ends; while the meaning index is being computed, that stops (its batches are kept)
        so the edit shows now. `watched`: asked by the folder watcher, not by the user (see
        _on_index_built); `changed`: the only paths to look at, taken from the watcher at `read_from`;
        `quiet`: the check that follows such a refresh (no meaning index, said only if it finds something)."""
        if self.folder is None:
            return
        request = BuildRequest(
            self.folder,
            self.index_dir,
            self.settings.index_settings(),
            self._wants()[0],
            embedder=self.settings.embedder if self.builds_meaning and not quiet else None,
            showing=self._showing(),
            verify=verify,
            changed=changed,
            quiet=quiet,
            read_from=read_from,
        )
        if self.engine.building:
            self._pending_watch = watched and (self._pending is None or self._pending_watch)
            self._pending = request if self._pending is None else _merged(self._pending, request)
            if self.embedding:
                self.engine.cancel_build()  # resumed by the build that starts next
            return
        self._start(request, watched)

    @property
    def builds_meaning(self) -> bool:
        """Whether builds go on to compute the meaning index: the setting, or a mode that needs it."""
        return self.settings.meaning_index or asks_meaning(self._wants()[1])

    def compute_meaning(self) -> bool:
        """Have the build process compute what the open index's meaning index lacks, unless it already
        is or nothing lacks; returns whether it was started. Asked when a mode or the settings want it."""
        library = self.library
        if self.embedding or library is None or library.has_meaning(embedder_name(self.settings.embedder)):
            return False
        self.refresh()
        return True

    def _start(self, request: BuildRequest, watched: bool = False) -> None:
        """Hand `request` to the build process. After a refresh the watcher asked for (its paths
        alone, or the whole folder after a folder event), the whole folder is checked a second
        later if that refresh looked at the paths alone or failed (see _finish)."""
        self._building_folder = request.folder
        self._read_from = request.read_from if request.changed is not None else time.monotonic()
        self._running = request
        self._check_due = (request.changed is not None or watched) and not request.quiet
        self._check_timer.stop()
        if not request.quiet:
            self.build_started.emit()
        self.engine.build(request)

    def cancel_build(self) -> None:
        self._pending = None
        self._check_due = False
        self._check_timer.stop()
        self.engine.cancel_build()

    def _on_check_timer_timeout(self) -> None:
        if self._check_due and not self.engine.building:
            self.refresh(watched=True, quiet=True)

    def _read_after_change(self) -> bool:
        """Whether the build under way reads the folder after the latest change the watcher saw."""
        return self.watcher.last_change < self._read_from

    def _on_folder_changed(self) -> None:
        if self.engine.building and self._building_folder == self.folder and self._read_after_change():
            return  # F5 after saving: the build under way reads the folder after the change
        self.status.emit("Notes changed on disk: updating the index…", SHORT_MS)
        read_from = time.monotonic()  # every change the watcher has reported by now is in `changed`
        self.refresh(watched=True, changed=self.watcher.take_changes(), read_from=read_from)

    def _on_watch_failed(self, line: str) -> None:
        self.status.emit(line, LONG_MS)

    def _on_progress_changed(self, msg: Progress | EmbeddingProgress) -> None:
        if self._building_folder == self.folder:  # else a build of a folder the user has left, being cancelled
            self.build_progressed.emit(msg)

    def _finish(self) -> bool:
        """A build ended: start the waiting one if it is of the open folder (returns True when it did)."""
        self.engine.building = False
        self.embedding = False
        self.build_stopped.emit()
        request, self._pending = self._pending, None
        if request is not None and request.folder == self.folder:
            self._start(replace(request, showing=self._showing()), self._pending_watch)
            return True
        if self._check_due:
            self._check_timer.start()
        return False

    def _use(self, library: IndexReader) -> None:
        self.library = library
        self.engine.set_library(library)
        if self.folder is not None:
            self.watcher.watch(self.folder, library.settings.load.extensions, self.index_root())
        self.index_changed.emit(library)

    def _on_index_opened(self, library: IndexReader) -> None:
        """The stored index, opened by the build process: search it at once while the refresh runs."""
        if self.library is None and library.folder == Path(self.folder or ""):
            self._use(library)

    def _on_index_built(self, outcome: BuildOutcome) -> None:
        self._read_from = max(self._read_from, outcome.report.walk_started)
        if outcome.report.walk_started:
            self._check_due = False  # the whole folder was walked after all (see core.rewalk)
        if self._pending_watch and self._read_after_change():
            self._pending = None  # the watcher's change reached it before this build walked the folder
        if self._running is not None and self._running.quiet:
            if not outcome.report.rebuilt:
                self._finish()  # the watcher missed nothing: nothing to say or to show again
                return
            if self.builds_meaning:
                self.refresh(watched=True)  # next, the meaning index of what the watcher missed
        if outcome.meaning_follows:  # the process goes on embedding; a waiting build stops it
            self.embedding = True
            queued = self._pending is not None
            if queued:
                self.engine.cancel_build()
        else:
            queued = self._finish()
        if outcome.library.folder != Path(self.folder or ""):
            return  # a build for a folder the user has since left
        report = outcome.report
        if outcome.damaged:
            self.status.emit(f"The stored index was damaged ({outcome.damaged}); it was rebuilt.", LONG_MS)
        elif report.other_options:  # e.g. `ragdesk index --max-mb 20` before: rebuilt with Settings', said so
            self.status.emit(
                f"Rebuilt with this window's Settings: the index was built with other options "
                f"({'; '.join(report.other_options)})",
                LONG_MS,
            )
        elif report.rebuilt:
            self.status.emit(
                f"Indexed in {report.elapsed_s:.1f} s: {report.added} added, {report.changed} changed, "
                f"{report.removed} removed",
                NORMAL_MS,
            )
        else:
            self.status.emit("Index is up to date", SHORT_MS)
        self._use(outcome.library)
        if not queued:
            self.build_ended.emit("built", "")

    def _on_meaning_indexed(self, msg: MeaningIndexed) -> None:
        self._finish()
        if msg.embedded:
            self.status.emit(
                f"Meaning index complete: {msg.embedded:,} chunks embedded in {duration(msg.elapsed_s)}; "
                "hybrid search is on",
                NORMAL_MS,
            )
        self.meaning_indexed.emit(msg)

    def _on_index_replaced(self) -> None:
        """Another process (a terminal's `ragdesk index` or `search`) published a newer index while the
        build process embedded this one: open that one and go on embedding it (refreshed if needed)."""
        if self._finish():
            return  # a waiting refresh opens it anyway
        self.status.emit(REPLACED_LINE, NORMAL_MS)
        self.refresh()

    def _on_build_failed(self, error: Exception) -> None:
        embedding, check = self.embedding, self._running is not None and self._running.quiet
        if self._finish():
            return  # a newer build of the open folder started (or the check of a failed refresh, soon)
        if embedding:
            self.status.emit(
                f"The meaning index could not be computed: {describe(error)}. BM25 search works.", ERROR_MS
            )
            return
        if check:  # the refresh before it failed and said so; a second warning would tell nothing new
            self.status.emit(f"Checking the notes folder for changes failed: {describe(error)}.{KEPT}", ERROR_MS)
            return
        kept = KEPT if self.library is not None else ""
        self.build_ended.emit("failed", f"Indexing failed: {describe(error)}.{kept}")

    def _on_build_cancelled(self) -> None:
        embedding = self.embedding
        if self._finish():
            return  # cancelled because another folder was opened, or a refresh waited; that build started
        if embedding and self.library is not None:
            done, total = self.library.meaning_progress(embedder_name(self.settings.embedder))
            self.status.emit(
                f"Meaning index paused at {done:,} of {total:,} chunks; it continues at the next refresh (F5). "
                "BM25 search works.",
                LONG_MS,
            )
            return
        kept = KEPT if self.library is not None else ""
        self.status.emit(f"Indexing cancelled.{kept}", NORMAL_MS + 2000)
        self.build_ended.emit("cancelled", "")

    def recover(self, error: Exception) -> bool:
        """A search failed on `error`: when another process published a newer index meanwhile (which
        deleted the files of this one it had not read yet), open that one; when the index is damaged,
        check every file and rebuild, once per generation (so a damage the rebuild cannot mend does not
        loop). True when either started."""
        library = self.library
        if library is not None and isinstance(error, (IndexDamaged, GenerationReplaced)) and library.replaced():
            self.refresh()
            return True
        generation = library.generation if library is not None else None
        if not isinstance(error, IndexDamaged) or generation == self._verified_generation:
            return False
        self._verified_generation = generation
        self.status.emit(f"The index is damaged ({describe(error)}); rebuilding it…", LONG_MS)
        self.refresh(verify=True)
        return True

    def index_root(self) -> Path:
        return Path(self.index_dir) if self.index_dir else store.default_index_root()

    def clear_cache(self) -> str:
        """Delete every stored index (About dialog) and re-index the open folder; returns what happened."""
        root = self.index_root()
        if self.index_dir:
            return "This session uses a custom index folder; it was left alone."
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.exists() else 0
        failures = fileio.remove_tree(root)
        self.refresh()
        if failures:
            return (
                f"Could not clear the whole cache: {len(failures)} item(s) remain in {root} "
                f"(first: {failures[0]}). Close other ragdesk windows and try again, or remove them by hand."
            )
        return f"Cleared {size / 1e6:.1f} MB; the open folder is being re-indexed."

    def shutdown(self) -> None:
        self.watcher.clear()
        self.engine.shutdown()


def _merged(waiting: BuildRequest, newer: BuildRequest) -> BuildRequest:
    """One request doing what both would: the newer one, looking at both's paths (or at everything)."""
    if waiting.folder != newer.folder:
        return newer  # the folder was left: its waiting build is not wanted
    both = waiting.changed | newer.changed if waiting.changed is not None and newer.changed is not None else None
    return replace(
        newer,
        changed=both,
        verify=waiting.verify or newer.verify,
        quiet=waiting.quiet and newer.quiet,
        embedder=newer.embedder or waiting.embedder,
    )
