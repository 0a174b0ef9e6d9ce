"""Running a build (or an evaluation) in its own process, reporting through a queue.

A desktop app should not tokenize in the process that paints its window: CPU-bound Python in
any thread makes the GUI thread wait for the GIL at every event (tens of milliseconds each).
The app starts `build_job` in a child process with a `BuildJob`; the child reads, chunks, indexes,
derives the analyzer's indexes and publishes them on disk, and the app then maps the result.
What the child says on the queue is one of the message classes below (all picklable).
The Evaluate dialog's experiments run the same way (`eval_job`): the chunk-size one builds ten indexes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import store
from .analyzers import BASE_ANALYZERS, AnalyzerConfig
from .build import BuildCancelled, BuildReport, build_index
from .dense import Embedder, dense_available, load_embedder
from .embeddings import EmbeddingCancelled, GenerationReplaced
from .evaluate import Question, chunk_sweep, compare_analyzers, param_grid
from .meaning_writer import MeaningRun, repair_meaning
from .orphans import exit_with_parent
from .params import IndexSettings, SearchParams
from .reader import IndexReader
from .store import IndexDamaged, IndexMissing

PROGRESS_INTERVAL_S = 0.05
EMBED_NICENESS = 10  # the meaning index can take hours on a large folder: it yields the CPU to the window
WAITING = "waiting for another ragdesk process to finish indexing this folder…"
MEANING_WAITING = "waiting for another ragdesk process computing this folder's meaning index…"


@dataclass(frozen=True)
class BuildJob:
    """What to build: the folder and its index settings, the analyzer to have ready, and options."""

    folder: str
    index_dir: str | None
    settings: IndexSettings
    analyzer: AnalyzerConfig
    embedder: str | None = None  # also compute embeddings with this model (see core.dense.load_embedder)
    verify: bool = False  # check every stored file's checksum first; a damaged index is rebuilt in full
    parent_pid: int | None = None  # the window's: the build exits when it does
    changed: frozenset[str] | None = None  # the only paths that changed (the watcher's): see core.rewalk


@dataclass(frozen=True)
class Opened:
    """The stored index is current enough to search now, while the refresh runs."""


@dataclass(frozen=True)
class Progress:
    """Files done of total, chunks so far, the current file (total 0: not started, `current` says why)."""

    done: int
    total: int
    chunks: int
    current: str


@dataclass(frozen=True)
class EmbeddingProgress:
    """The meaning index under way: chunks embedded by this run of those it has to embed, in how many
    seconds, and chunks with an embedding of all the index's chunks (earlier runs' batches count)."""

    done: int
    total: int
    elapsed_s: float = 0.0
    embedded: int = 0
    chunks: int = 0

    @property
    def seconds_left(self) -> float | None:
        """At this run's pace so far; None until a batch is done."""
        return self.elapsed_s / self.done * (self.total - self.done) if self.done and self.elapsed_s > 0 else None

    def line(self) -> str:
        """ "Meaning index 728 / 1,000 chunks, about 2 min left": the window's status bar and the CLI."""
        left = self.seconds_left
        shown = f"Meaning index {self.embedded + self.done:,} / {self.chunks:,} chunks"
        return shown + (f", {duration(left)} left" if left is not None and self.done < self.total else "")


def duration(seconds: float) -> str:
    """A time span as a person says it: "40 s", "about 6 min", "about 2 h 10 min"."""
    if seconds < 60:
        return f"{max(seconds, 1):.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


@dataclass(frozen=True)
class Done:
    """The BM25 index is published. With `meaning_follows`, the process goes on to embed its chunks
    (EmbeddingProgress, then MeaningIndexed, Cancelled or Failed)."""

    report: BuildReport
    damaged: str | None = None  # why the stored index was discarded, if it was
    meaning_follows: bool = False


@dataclass(frozen=True)
class MeaningIndexed:
    """Every chunk of the published index has its embedding from model `name`."""

    name: str
    embedded: int  # chunks embedded by this run (the rest were stored or reused)
    elapsed_s: float


@dataclass(frozen=True)
class Replaced:
    """Another process published a newer generation while this one embedded the one it built: refresh,
    which opens that generation (nothing to re-read when it holds the same notes), and embed it."""


@dataclass(frozen=True)
class Cancelled:
    """The build stopped on request; nothing was published."""


@dataclass(frozen=True)
class Failed:
    """The build failed; the previous index stays in use. `error` is the exception itself."""

    error: Exception


Message = Opened | Progress | EmbeddingProgress | Done | MeaningIndexed | Replaced | Cancelled | Failed


@dataclass(frozen=True)
class EvalJob:
    """An experiment of core.evaluate to run on a folder's stored index (the current generation)."""

    experiment: str  # "analyzers", "chunks" or "params"
    folder: str
    index_root: str  # the folder's index folder (IndexReader.root)
    questions: list[Question]
    params: SearchParams  # the analyzer, k1 and b the window searches with (BM25)
    parent_pid: int | None = None


@dataclass(frozen=True)
class EvalProgress:
    """Questions done of all the experiment asks (each question once per configuration)."""

    done: int
    total: int


@dataclass(frozen=True)
class EvalDone:
    """The experiment's rows; fewer than asked for when it was cancelled."""

    rows: list[dict[str, Any]]


class _Pace:
    """Lets a progress report through when it is the last, or PROGRESS_INTERVAL_S after the previous one."""

    def __init__(self) -> None:
        self.last = 0.0

    def due(self, done: int, total: int) -> bool:
        now = time.monotonic()
        if done == total or now - self.last >= PROGRESS_INTERVAL_S:
            self.last = now
            return True
        return False


_PREPARED: dict[tuple[str, str | None], IndexReader] = {}  # see prepare


def prepare(folder: str, index_dir: str | None, analyzer: AnalyzerConfig) -> None:
    """In the process kept for the next build, while it waits: open `folder`'s current index with
    `analyzer`'s parts mapped, the refresh that comes next starts from (0.15 s at 31,000 notes). The
    embedding model is not loaded here: a build loads it after publishing (see build_job), and an
    idle process holding it would double the memory of one that embeds."""
    import numpy.ma  # noqa: F401  np.unique imports it on first use: 25 ms of a refresh's delta derivation

    with contextlib.suppress(IndexMissing, IndexDamaged, OSError):
        reader = IndexReader.open(folder, index_dir)
        reader.warm(analyzer)
        reader.path_index()  # what the refresh's plan looks notes up in, when their paths changed
        _PREPARED[(folder, index_dir)] = reader


def _open_previous(job: BuildJob) -> IndexReader:
    """The index the build starts from: the one `prepare` opened when it is still the current
    generation (generations never change once published), else opened now, sharing its base."""
    prepared = _PREPARED.pop((job.folder, job.index_dir), None)
    if prepared is not None and not job.verify and store.current_generation(prepared.root) == prepared.generation:
        return prepared
    reuse = prepared if not job.verify else None
    return IndexReader.open(job.folder, job.index_dir, verify=job.verify, reuse=reuse)


def build_job(job: BuildJob, queue: Any, cancel: Any) -> None:
    """Child-process entry point: build or refresh `job.folder`'s index, reporting on `queue`."""
    if job.parent_pid is not None:  # the window: a killed window must not leave its build running
        exit_with_parent(job.parent_pid)
    pace = _Pace()

    def progress(done: int, total: int, chunks: int, current: str) -> None:
        if pace.due(done, total):
            queue.put(Progress(done, total, chunks, current))

    damaged = None
    try:
        previous = None
        try:
            previous = _open_previous(job)
            if previous.settings == job.settings:
                previous.warm(job.analyzer)
                queue.put(Opened())
        except IndexMissing:
            pass
        except IndexDamaged as exc:
            damaged = str(exc)
        meaning = bool(job.embedder) and dense_available(job.embedder)  # else BM25 only; the window says why
        reader, report = build_index(
            job.folder,
            job.index_dir,
            job.settings,
            progress=progress,
            cancelled=cancel.is_set,
            previous=previous,
            reuse_stored=damaged is None,
            warm=job.analyzer,
            waiting=lambda: queue.put(Progress(0, 0, 0, WAITING)),
            changed=job.changed,
        )
        queue.put(Done(report, damaged, meaning_follows=meaning))
        if meaning and job.parent_pid is not None:
            os.nice(EMBED_NICENESS)  # background work: the window (and the user's other programs) go first
        if meaning:  # the meaning index, here rather than in the window's process
            # loaded after publishing, so an edit never waits for it (onnxruntime: 0.4 s); a model that
            # cannot load fails here, and the window says the meaning index could not be computed
            embedder = load_embedder(job.embedder)
            for name in BASE_ANALYZERS:  # first, what the explanation pane's ranks under each analyzer read
                reader.warm(job.analyzer.with_name(name))
            embed_index(reader, embedder, queue, cancel.is_set)
    except GenerationReplaced:  # its rows stay with the base it shares or were copied at that publish
        queue.put(Replaced())
    except (BuildCancelled, EmbeddingCancelled):
        queue.put(Cancelled())
        if job.parent_pid is not None:
            _exit_now(queue)
        return
    except Exception as exc:  # reported to the user; the previous index stays in use
        traceback.print_exc()
        queue.put(Failed(_picklable(exc)))
        return


def _say_meaning_waiting(queue: Any) -> Callable[[], None]:
    """What tells the window that another process (a terminal's `ragdesk index`) holds the meaning lock."""
    return lambda: queue.put(Progress(0, 0, 0, MEANING_WAITING))


def embed_index(reader: IndexReader, embedder: Embedder, queue: Any, cancelled: Callable[[], bool]) -> None:
    """Compute `reader`'s missing embeddings, reporting EmbeddingProgress at most every
    PROGRESS_INTERVAL_S and MeaningIndexed at the end (EmbeddingCancelled when `cancelled`;
    GenerationReplaced when another process publishes: the window refreshes). A damaged meaning
    index is removed first and so embedded again here, in the background (meaning_writer.repair_meaning)."""
    for line in repair_meaning(reader, embedder):
        print(f"ragdesk: {line}", file=sys.stderr)
    embedded, chunks = reader.meaning_progress(embedder.name)
    t0 = time.monotonic()
    pace = _Pace()

    def progress(done: int, total: int) -> None:
        if pace.due(done, total):  # the chunks not to do were stored already
            queue.put(EmbeddingProgress(done, total, time.monotonic() - t0, chunks - total, chunks))

    if embedded < chunks:
        queue.put(EmbeddingProgress(0, chunks - embedded, 0.0, embedded, chunks))
    run = MeaningRun(reader, embedder).complete(progress, cancelled, waiting=_say_meaning_waiting(queue))
    queue.put(MeaningIndexed(embedder.name, run.embedded, time.monotonic() - t0))


def eval_job(job: EvalJob, queue: Any, cancel: Any) -> None:
    """Child-process entry point: run `job.experiment`, reporting EvalProgress, then EvalDone or Failed."""
    if job.parent_pid is not None:
        exit_with_parent(job.parent_pid)
    pace = _Pace()

    def progress(done: int, total: int) -> None:
        if pace.due(done, total):
            queue.put(EvalProgress(done, total))

    try:
        lib = IndexReader.open(job.folder, job.index_root)
        run = {"chunks": chunk_sweep, "analyzers": compare_analyzers}.get(job.experiment)
        if run is not None:
            rows = run(lib, job.questions, job.params, progress=progress, cancelled=cancel.is_set)
        else:
            rows = param_grid(lib, job.questions, job.params, progress=progress, cancelled=cancel.is_set)
    except Exception as exc:  # shown in the dialog; the window carries on
        traceback.print_exc()
        queue.put(Failed(_picklable(exc)))
        return
    queue.put(EvalDone(rows))


def _picklable(exc: Exception) -> Exception:
    """`exc` if it crosses the process boundary intact, else a RuntimeError with its type and text."""
    try:
        back = pickle.loads(pickle.dumps(exc))
        if type(back) is type(exc) and str(back) == str(exc):
            return exc
    except Exception:  # noqa: BLE001 - any failure to pickle means: send the text instead
        pass
    return RuntimeError(f"{type(exc).__name__}: {exc}")


def _exit_now(queue: Any) -> None:
    """End the build process at once, its message delivered: a cancelled pool can take many seconds
    to wind down (workers finish their batch, one may block writing a result nobody reads), and the
    window's next build (another folder, say) waits for this one. The workers exit with it (orphans)."""
    queue.close()
    queue.join_thread()
    os._exit(0)
