"""Workers that keep core work off the GUI thread: one builds indexes, one answers queries.

Each worker is a QObject moved to its own QThread; the window talks to them only
through queued signals. While a build runs, the search worker keeps serving the
previous index; the new one replaces it only when the build completes.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from queue import Empty
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..core.analyzers import ANALYZERS, AnalyzerConfig
from ..core.build import BuildReport
from ..core.dense import DEFAULT_EMBEDDER, DenseUnavailable, Embedder, load_embedder
from ..core.embeddings import MeaningIndexUnwritable
from ..core.errors import RagdeskError
from ..core.excerpts import Excerpt
from ..core.explain import TermRow
from ..core.injection import Finding
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
from ..core.modes import AUTO, Resolved, resolve
from ..core.orphans import serve_one
from ..core.params import IndexSettings, SearchParams
from ..core.reader import IndexReader
from ..core.results import Hit, SearchResult
from ..core.store import IndexDamaged, IndexFolderRefused, IndexMissing
from ..core.walk import IgnoreFileUnreadable, count_other_files
from ..core.whynot import NotIndexed, why_not
from .texts import NOT_DERIVED


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


class BuildProcessDied(RagdeskError, RuntimeError):
    """The build process ended without saying why (killed, or crashed in native code)."""


def describe(error: BaseException) -> str:
    """An exception as the status bar shows it: its type (when it tells something) and its text."""
    written_for_people = (BuildProcessDied, IndexFolderRefused, IgnoreFileUnreadable, MeaningIndexUnwritable)
    if isinstance(error, written_for_people) or type(error) is RuntimeError:
        return str(error)
    return f"{type(error).__name__}: {error}"


SPARE_DELAY_S = 1.0  # the process kept for the next build imports the core this long after it starts
POLL_S = 0.01  # how often the waiting build thread looks at Cancel: a refresh stops embedding this fast


class ChildProcess:
    """A spawned process waiting for one task (core.orphans.serve_one). Started ahead of need, it has
    imported the core by the time a refresh comes: a cold start costs about a second, most of what
    an edit used to wait for before it showed."""

    def __init__(self, name: str, delay_s: float = 0.0, prepare: tuple[Any, ...] = ()) -> None:
        ctx = get_context("spawn")
        self.tasks: Any = ctx.Queue()
        self.queue: Any = ctx.Queue()
        self.cancel = ctx.Event()
        self.proc = ctx.Process(
            target=serve_one,
            args=(self.tasks, self.queue, self.cancel, os.getpid(), "ragdesk.core.jobs", delay_s, prepare),
            name=name,
        )
        self.proc.start()

    def stop(self) -> None:
        """End the process if it still waits or works (it holds nothing that needs a clean exit)."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


def run_in_child(
    target: Callable[[Any, Any, Any], None],
    job: Any,
    cancel: threading.Event,
    handle: Callable[[Any], bool],
    name: str,
    killable: Callable[[], bool] = lambda: False,
    child: ChildProcess | None = None,
) -> BuildProcessDied | None:
    """Run `target(job, queue, cancel_event)` in `child` (a process started ahead, or a new one) and
    pass each message it queues to `handle` (on this thread) until `handle` says it was the last.
    `cancel` (set from any thread) is forwarded to the child; when `killable()` says the child's work
    may be cut anywhere, the child is killed at once instead and `handle` gets Cancelled. Returns the
    error when the child died without a last message."""
    if child is None or not child.proc.is_alive():
        child = ChildProcess(name)
    proc = child.proc
    child.tasks.put((target, job, dict(os.environ)))
    killed = False
    try:
        while True:
            if cancel.is_set():
                child.cancel.set()
                if killable():
                    # not waited for: its exit (unmapping the model and the index) took 30-40 ms that an
                    # edit waited for; multiprocessing reaps it when it next starts a process
                    proc.kill()
                    killed = True
                    handle(Cancelled())
                    return None
            try:
                msg = child.queue.get(timeout=POLL_S)
            except Empty:
                if not proc.is_alive() and child.queue.empty():
                    return BuildProcessDied(f"the {name} process stopped unexpectedly (exit code {proc.exitcode})")
                continue
            if handle(msg):
                return None
    finally:
        if not killed:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()


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


@dataclass(frozen=True)
class SearchRequest:
    """One query with its parameters; `serial` lets the worker drop requests that were overtaken.
    `mode` is the Mode switch's request (auto, bm25, dense or hybrid): resolved per search
    (core.modes.resolve), it replaces `params.mode`."""

    serial: int
    query: str
    params: SearchParams  # every chunk in its own place (group=False): the list groups when asked
    pinned: int | None = None  # chunk id pinned for comparison
    mode: str = AUTO
    embedder: str = DEFAULT_EMBEDDER  # which embedding model dense and hybrid use

    @property
    def analyzer(self) -> AnalyzerConfig:
        return self.params.analyzer


@dataclass
class SearchOutcome:
    request: SearchRequest
    result: SearchResult
    highlights: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)  # chunk id -> spans
    stale: set[int] = field(default_factory=set)
    findings: dict[int, list[Finding]] = field(default_factory=dict)  # chunk id -> instruction-like passages
    masked: dict[int, Hit] = field(default_factory=dict)  # chunk id -> the hit with its secrets masked (shown)
    total: int = 0  # chunks matching any query term (the list shows the first k)
    pinned_rows: list[TermRow] = field(default_factory=list)
    pinned_score: float = 0.0
    library: IndexReader | None = None
    meaning: tuple[int, int] | None = None  # auto, the meaning index unfinished: chunks embedded so far, of all
    other_files: int = 0  # a folder without notes: how many other files it holds (counted here, not in the window)


class SearchWorker(QObject):
    """Answers queries against the current library; always works on the latest request only."""

    search_finished = Signal(object)  # SearchOutcome
    ranks_found = Signal(int, int, object)  # serial, chunk id, {analyzer name: rank, None or NOT_DERIVED}
    ranks_failed = Signal(int, int, object)  # serial, chunk id, the exception (IndexDamaged, OSError)
    why_not_found = Signal(object)  # core.whynot.WhyNot
    why_not_failed = Signal(object)  # the exception: why the note cannot be explained (NotIndexed, ...)
    search_failed = Signal(object)  # the exception (core.store.IndexDamaged: the window rebuilds)

    def __init__(self) -> None:
        super().__init__()
        self.library: IndexReader | None = None
        self._embedders: dict[str, Embedder] = {}
        self._others: tuple[IndexReader, int] | None = None  # the last index without notes, its other files
        self.latest_serial = 0  # written by the GUI thread, read here (a plain int: atomic under the GIL)

    def _embedder(self, spec: str) -> Embedder:
        """Load the embedding model once per spec, in this thread (raises DenseUnavailable when missing)."""
        if spec not in self._embedders:
            self._embedders[spec] = load_embedder(spec)
        return self._embedders[spec]

    def _resolve(self, request: SearchRequest, lib: IndexReader) -> Resolved:
        """The search the request runs (core.modes.resolve). The meaning index is computed by the
        build process, never in the window's: until it is complete, auto and hybrid search the chunks
        embedded so far (with BM25's top few embedded for the search) and dense those alone."""
        return resolve(lib, request.mode, request.embedder, partial=True, load=self._embedder)

    def _other_files(self, lib: IndexReader) -> int:
        """Files of a folder without notes that are not notes, counted once per index: a walk of up to
        100,000 files, which froze the window on every keystroke while it ran in the GUI thread."""
        if self._others is None or self._others[0] is not lib:
            self._others = (lib, count_other_files(lib.folder, lib.settings.load.extensions))
        return self._others[1]

    @Slot(object)
    def set_library(self, library: IndexReader) -> None:
        self.library = library

    @Slot(object)
    def search(self, request: SearchRequest) -> None:
        if request.serial < self.latest_serial or self.library is None:
            return
        lib = self.library
        try:
            lib.warm(request.analyzer, apart=True)  # another analyzer's index: derived apart, not under the GIL
            resolved = self._resolve(request, lib)
            mode = resolved.mode
            result = lib.search(request.query, request.params, resolved=resolved)
            if request.mode not in (mode, AUTO) and result.reason is None:
                result.reason = f"{resolved.reason}: BM25 results shown instead of {request.mode}"
            highlights = {h.chunk_id: lib.highlight_spans(h.text, request.query, request.analyzer) for h in result.hits}
            stale = {h.chunk_id for h in result.hits if lib.is_stale(h.chunk_id)}
            # found here, not in the GUI thread: ~1 ms per non-ASCII chunk
            findings = {h.chunk_id: f for h in result.hits if (f := Excerpt.of(h).findings)}
            masked = {h.chunk_id: m for h in result.hits if (m := h.masked()) is not None}
            total = len(result.hits) if mode.uses_meaning else lib.count_matches(request.query, request.analyzer)
            outcome = SearchOutcome(request, result, highlights, stale, findings, masked, total, library=lib)
            outcome.meaning = resolved.meaning
            if not lib.note_paths:
                outcome.other_files = self._other_files(lib)
            if request.pinned is not None and request.pinned < lib.n_chunks:
                outcome.pinned_rows = lib.explain(
                    request.query, request.pinned, request.analyzer, request.params.k1, request.params.b
                )
                outcome.pinned_score = sum(r.contribution for r in outcome.pinned_rows)
        except Exception as exc:
            traceback.print_exc()
            self.search_failed.emit(exc)
            return
        self.search_finished.emit(outcome)

    @Slot(object, str)
    def explain_note(self, request: SearchRequest, path: str) -> None:
        """Why the note at `path` is not higher for the request's query (see core.whynot)."""
        if self.library is None:
            self.why_not_failed.emit(IndexMissing("no index is open"))
            return
        try:
            resolved = self._resolve(request, self.library)
            params = replace(request.params, mode=resolved.mode)
            why = why_not(self.library, request.query, path, params, resolved.embedder, True)
        except (NotIndexed, IndexDamaged, DenseUnavailable) as exc:
            self.why_not_failed.emit(exc)
            return
        self.why_not_found.emit(why)

    @Slot(object, int)
    def find_ranks(self, request: SearchRequest, chunk_id: int) -> None:
        """The chunk's rank under each analyzer (same query, k1, b)."""
        if request.serial < self.latest_serial or self.library is None:
            return
        ranks: dict[str, int | None] = {}
        for name in ANALYZERS:
            if request.serial < self.latest_serial:
                return
            config = request.analyzer.with_name(name)
            if not self.library.ready(config):  # the build process derives it after the next build
                ranks[name] = NOT_DERIVED
                continue
            try:
                ranks[name] = self.library.rank_of(request.query, chunk_id, config, request.params.k1, request.params.b)
            except (IndexDamaged, OSError) as exc:  # the search reports a damaged index and has it rebuilt
                self.ranks_failed.emit(request.serial, chunk_id, exc)
                return
        self.ranks_found.emit(request.serial, chunk_id, ranks)


class Engine(QObject):
    """Owns the two worker threads and forwards requests to them as queued calls."""

    _build_requested = Signal(object)
    _search_requested = Signal(object)
    _ranks_requested = Signal(object, int)
    _why_not_requested = Signal(object, str)
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

    def shutdown(self) -> None:
        self.builder.cancel()
        for thread in (self.build_thread, self.search_thread):
            thread.quit()
            thread.wait()
        self.builder.close()
