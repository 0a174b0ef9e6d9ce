"""The build worker and the Engine that owns both workers: core work kept off the GUI thread.

Each worker is a QObject moved to its own QThread; the window talks to them only through queued
signals. The build worker runs each build in a spawned process (child_process.py); while a build
runs, the search worker (search_worker.py) keeps serving the previous index; the new one replaces
it only when the build completes.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..core.analyzers import AnalyzerConfig
from ..core.build import BuildReport
from ..core.jobs import (
    BuildJob,
    Cancelled,
    Done,
    EmbeddingProgress,
    Failed,
    MeaningIndexed,
    Message,
    Opened,
    Progress,
    Replaced,
    build_job,
)
from ..core.params import IndexSettings
from ..core.reader import IndexReader
from ..core.store import IndexDamaged
from .child_process import SPARE_DELAY_S, ChildProcess, run_in_child
from .search_worker import SearchRequest, SearchWorker


@dataclass(frozen=True)
class BuildRequest:
    folder: str
    index_dir: str | None
    settings: IndexSettings
    analyzer: AnalyzerConfig
    embedder: str | None = None  # then compute the meaning index with this model (see core.dense)
    showing: IndexReader | None = None  # the index the window shows now (not mapped again; its base is shared)
    verify: bool = False  # check the stored files' checksums first (a search found the index damaged)
    changed: frozenset[str] | None = None  # the only paths that changed, as the watcher named them (None: walk all)
    quiet: bool = False  # a check after `changed` refreshes: shown only when it finds something
    read_from: float = 0.0  # time.monotonic() when `changed` was taken: later changes are not in it


@dataclass
class BuildOutcome:
    library: IndexReader
    report: BuildReport
    damaged: str | None = None  # why the stored index was discarded, if it was
    meaning_follows: bool = False  # the build process goes on to compute the meaning index


class BuildWorker(QObject):
    """Runs each build in a child process (see core.jobs) and relays its progress and result.

    The heavy Python work never shares the GIL with the GUI thread; this thread only waits on a
    queue, checks for cancel, and finally maps the published index (a cheap, lazy open).
    """

    progress_changed = Signal(object)  # core.jobs.Progress or EmbeddingProgress
    index_opened = Signal(object)  # the stored IndexReader, usable at once while it is being refreshed
    index_built = Signal(object)  # BuildOutcome: the BM25 index is published and mapped
    meaning_indexed = Signal(object)  # core.jobs.MeaningIndexed: every chunk has its embedding
    index_replaced = Signal()  # another process published a newer index while this one embedded
    build_failed = Signal(object)  # the exception (core.store.IndexDamaged, OSError, ...)
    build_cancelled = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._cancel = threading.Event()
        self._embedding = False  # the build process is computing the meaning index
        self._spare: ChildProcess | None = None  # the next build's process, started once a build is done

    def cancel(self) -> None:
        """Thread-safe: asks the running (or next queued) build to stop at its next check."""
        self._cancel.set()

    def arm(self) -> None:
        """Clear a previous cancel; called by the GUI thread before it queues a build."""
        self._cancel.clear()

    @Slot(object)
    def build(self, request: BuildRequest) -> None:
        job = BuildJob(
            request.folder,
            request.index_dir,
            request.settings,
            request.analyzer,
            request.embedder,
            request.verify,
            parent_pid=os.getpid(),
            changed=request.changed,
        )
        self._embedding = False
        child, self._spare = self._spare, None
        # While it embeds, the build process is killed on Cancel rather than asked: a batch takes seconds
        # and is the most a kill can lose (its rows are flushed before the bits that say they are written).
        died = run_in_child(
            build_job,
            job,
            self._cancel,
            lambda msg: self._relay(request, msg),
            "indexing",
            lambda: self._embedding,
            child,
        )
        if died is not None:
            self.build_failed.emit(died)

    def _relay(self, request: BuildRequest, msg: Message) -> bool:
        """Pass one message of the build process on as a signal; True when it was the last."""
        if isinstance(msg, (Progress, EmbeddingProgress)):
            self.progress_changed.emit(msg)
            return False
        if isinstance(msg, Opened):
            reader = None if request.showing is not None else self._open(request)
            if reader is not None:
                self.index_opened.emit(reader)
            return False
        if isinstance(msg, Done):
            unchanged = request.quiet and not msg.report.rebuilt and request.showing is not None
            reader = request.showing if unchanged else self._open(request)  # a check that found nothing
            if reader is not None:
                self.index_built.emit(BuildOutcome(reader, msg.report, msg.damaged, msg.meaning_follows))
            self._embedding = msg.meaning_follows
            if self._spare is None:  # ready for the next refresh (an edit), while this one embeds or exits
                # with this index opened: a refresh starts from it (core.jobs.prepare)
                prepare = (request.folder, request.index_dir, request.analyzer)
                self._spare = ChildProcess("indexing", SPARE_DELAY_S, prepare)
            return reader is None or not msg.meaning_follows
        if isinstance(msg, MeaningIndexed):
            self.meaning_indexed.emit(msg)
        elif isinstance(msg, Replaced):
            self.index_replaced.emit()
        elif isinstance(msg, Cancelled):
            self.build_cancelled.emit()
        else:
            assert isinstance(msg, Failed)
            self.build_failed.emit(msg.error)
        return True

    def close(self) -> None:
        """End the process kept for the next build (after this worker's thread has stopped)."""
        if self._spare is not None:
            self._spare.stop()
            self._spare = None

    def _open(self, request: BuildRequest) -> IndexReader | None:
        """Map the index the build process published (reports a failure and returns None if it can't)."""
        try:
            library = IndexReader.open(request.folder, request.index_dir, reuse=request.showing)
            library.warm(request.analyzer)  # maps what the build process derived and published
        except (IndexDamaged, OSError) as exc:
            self.build_failed.emit(type(exc)(f"the new index cannot be opened: {exc}"))
            return None
        return library


class Engine(QObject):
    """Owns the two worker threads and forwards requests to them as queued calls."""

    _build_requested = Signal(object)
    _search_requested = Signal(object)
    _ranks_requested = Signal(object, int)
    _why_not_requested = Signal(object, str)
    _completions_requested = Signal()
    _library_changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.build_thread = QThread(self)
        self.build_thread.setObjectName("ragdesk-build")
        self.search_thread = QThread(self)
        self.search_thread.setObjectName("ragdesk-search")
        self.builder = BuildWorker()
        self.searcher = SearchWorker()
        self.builder.moveToThread(self.build_thread)
        self.searcher.moveToThread(self.search_thread)
        self._build_requested.connect(self.builder.build)
        self._search_requested.connect(self.searcher.search)
        self._ranks_requested.connect(self.searcher.find_ranks)
        self._why_not_requested.connect(self.searcher.explain_note)
        self._completions_requested.connect(self.searcher.find_completions)
        self._library_changed.connect(self.searcher.set_library)
        self.build_thread.start()
        self.search_thread.start()
        self.building = False
        self._serial = 0

    def next_serial(self) -> int:
        self._serial += 1
        self.searcher.latest_serial = self._serial
        return self._serial

    def build(self, request: BuildRequest) -> None:
        self.building = True
        self.builder.arm()
        self._build_requested.emit(request)

    def cancel_build(self) -> None:
        self.builder.cancel()

    def set_library(self, library: IndexReader) -> None:
        self._library_changed.emit(library)

    def search(self, request: SearchRequest) -> None:
        self._search_requested.emit(request)

    def find_ranks(self, request: SearchRequest, chunk_id: int) -> None:
        self._ranks_requested.emit(request, chunk_id)

    def explain_note(self, request: SearchRequest, path: str) -> None:
        self._why_not_requested.emit(request, path)

    def find_completions(self) -> None:
        """Ask the search thread for the folder names and tags of the library (completions_found)."""
        self._completions_requested.emit()

    def shutdown(self) -> None:
        self.builder.cancel()
        for thread in (self.build_thread, self.search_thread):
            thread.quit()
            thread.wait()
        self.builder.close()
