"""Building and refreshing a folder's index: walk, plan what changed, process new and changed notes
in parallel batches, and publish a full generation or a delta over the last one (core.writer).

The result is exactly what a full rebuild gives (same chunks, N, avgdl, n_t, scores). On cancel or
failure nothing is published and the previous index stays current.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import time
from collections.abc import Callable, Collection
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import locks, meaning_keep, store
from .analyzers import AnalyzerConfig
from .chunking import ChunkOptions
from .errors import BuildCancelled  # noqa: F401 (re-exported)
from .loader import NoteFile, Skipped
from .orphans import worker_pool
from .params import IndexSettings, setting_changes
from .paths import shown
from .reader import IndexReader
from .rewalk import rewalk
from .segment import Segment, derive_and_publish
from .tokenize import BatchResult, process_batch
from .walk import Walk, walk_folder
from .writer import DeltaPlan, Derive, write_delta, write_full

ProgressFn = Callable[[int, int, int, str], None]  # files done, files total, chunks so far, current file
CancelFn = Callable[[], bool]

PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this much to read, worker processes cost more than they save
BATCH_BYTES = 1024 * 1024  # a batch (one task for a worker) ends at this many bytes...
BATCH_FILES = 400  # ...or this many files
# A refresh writes only a delta segment on top of the last full build while the changed notes stay
# this small a share of the folder (and this few); beyond that it merges everything into a new base.
DELTA_MAX_SHARE = 0.05
DELTA_MAX_NOTES = 2000


@dataclass
class BuildReport:
    """What a build or refresh did, for the CLI's JSON and the status bar."""

    files: int = 0
    chunks: int = 0
    tokens: int = 0
    elapsed_s: float = 0.0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    rebuilt: bool = True  # False when the stored index was already current
    skipped: list[Skipped] = field(default_factory=list)
    # how the options asked for differ from those the stored index was built with (it was rebuilt)
    other_options: list[str] = field(default_factory=list)
    # time.monotonic() (one clock for every process on the machine) when the walk of the folder
    # began: a change on disk seen before it is in this build (the window drops a refresh it queued);
    # 0 when only the paths the watcher named were looked at
    walk_started: float = 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["walk_started"]  # this machine's clock: nothing a script can use
        d["skipped"] = [{"path": shown(s.path), "reason": s.reason, "loaded": s.loaded} for s in self.skipped]
        return d


def build_index(
    folder: str | os.PathLike[str],
    index_dir: str | os.PathLike[str] | None = None,
    settings: IndexSettings | None = None,
    progress: ProgressFn | None = None,
    cancelled: CancelFn | None = None,
    workers: int | None = None,
    previous: IndexReader | None = None,
    reuse_stored: bool = True,
    warm: AnalyzerConfig | None = None,
    waiting: Callable[[], None] | None = None,
    changed: Collection[str] | None = None,
) -> tuple[IndexReader, BuildReport]:
    """Build or refresh the index of `folder`, re-reading only new and changed notes.

    `previous`: the index opened before (else the stored one is opened); `reuse_stored=False` ignores
    the stored index (a full build), e.g. after it was found damaged. `warm`: also derive (or load)
    that analyzer's indexes before returning; a full build derives them in its worker processes
    while it writes the rest. Builds of one index run one at a time (an OS lock on the index
    folder): a second one waits (`waiting` is called once) and then finds the index current, or
    refreshes what changed since. Every meaning index's rows of unchanged notes are copied from the
    previous index into the new segments before they are published, whatever the caller (a step no
    caller may forget: it keeps hours of embedding; meaning_keep.keep).
    `changed`: the only paths that may have changed since `previous` (absolute, as the folder watcher
    reports them): only they are looked at again, unless a whole walk is needed (see core.rewalk).
    """
    t0 = time.perf_counter()
    folder_path = Path(folder).resolve()
    root = store.index_dir_for(folder_path, index_dir)
    job = _Build(folder_path, root, settings or IndexSettings(), progress, cancelled, workers, warm, changed)
    try:
        with locks.build_lock(root, cancelled, waiting):
            store.remove_stale_temporaries(root)
            if previous is not None and reuse_stored:
                current = store.current_generation(root)
                stale = current is None or current.name != previous.generation.name  # another process built since
                if stale or previous.folder != folder_path:
                    previous = None
            if previous is None and reuse_stored:
                with contextlib.suppress(store.IndexDamaged, store.IndexMissing):
                    previous = IndexReader.open(folder_path, root)
            job.kept = meaning_keep.map_kept(previous) if previous is not None else {}  # other settings too
            other_options = setting_changes(previous.settings, job.settings) if previous is not None else []
            if other_options:
                previous = None
            reader, report = job.run(previous)
            report.other_options = other_options
    except store.IndexBusy as exc:  # cancelled while another process held the lock
        raise BuildCancelled(f"indexing was cancelled while {exc}") from exc
    report.elapsed_s = time.perf_counter() - t0
    return reader, report


@dataclass
class _Plan:
    """What a refresh must do: notes reused from the previous index, files to read, and the count."""

    walk: Walk
    previous_idx: np.ndarray  # per walked note: its index in the previous index if unchanged, else -1
    todo: list[NoteFile]
    carried: list[Skipped]  # files that failed to read before and have not changed since
    report: BuildReport

    @cached_property
    def reuse(self) -> dict[str, int]:
        """Path -> note index in the previous index, of every unchanged note (a full merge's map; a
        delta refresh never builds it: 31,000 entries at the scale corpus)."""
        same = self.previous_idx >= 0
        return dict(zip(itertools.compress(self.walk.paths, same.tolist()), self.previous_idx[same].tolist()))


def _plan(previous: IndexReader | None, walk: Walk) -> _Plan:
    """Compare the walk with the previous index in columns (the notes are in path order in both, so
    an unchanged set of paths is one list comparison): only new and changed notes become objects."""
    n = len(walk)
    if previous is None:
        was = np.full(n, -1, np.int64)
    elif walk.paths == previous.note_paths:
        was = np.arange(n, dtype=np.int64)
    else:
        index = previous.path_index()
        was = np.array([index.get(p, -1) for p in walk.paths], np.int64).reshape(n)
    same = was >= 0
    if previous is not None:
        at = was[same]
        same[same] = (previous.note_size[at] == walk.sizes[same]) & (previous.note_mtime[at] == walk.mtimes[same])
    previous_idx = np.where(same, was, -1)
    unchanged = int(np.count_nonzero(same))
    prev_read_skips = {s.path: s for s in previous.skipped if s.size >= 0} if previous else {}
    carried: list[Skipped] = []
    todo: list[NoteFile] = []
    for f in walk.files(np.flatnonzero(~same).tolist()):
        old = prev_read_skips.get(f.path)
        if old is not None and not old.loaded and (old.size, old.mtime_ns) == (f.size, f.mtime_ns):
            if old.may_pass and _readable_now(f, old):
                todo.append(f)  # it failed for a reason that has passed (back, or chmod fixed): read it
            else:
                carried.append(old)
        else:
            todo.append(f)
    report = BuildReport()
    report.changed = int(np.count_nonzero(was[~same] >= 0))
    report.removed = (len(previous.note_paths) if previous else 0) - unchanged - report.changed
    report.added = len(todo) - report.changed
    report.unchanged = unchanged
    return _Plan(walk, previous_idx, todo, carried, report)


def _readable_now(file: NoteFile, skip: Skipped) -> bool:
    """Whether a file that failed to read for a passing reason opens now; when not, the skip's time
    of the last try moves on (without a new generation: nothing else changed)."""
    try:
        with open(file.abspath, "rb") as fh:
            fh.read(1)
    except OSError:
        skip.tried_at = time.time()
        return False
    return True


def _is_current(previous: IndexReader | None, plan: _Plan) -> bool:
    """Nothing to do: no file new, changed or gone, and the same files skipped for the same reasons."""
    if previous is None or plan.todo or plan.report.removed:
        return False
    stored_walk_skips = {(s.path, s.reason) for s in previous.skipped if s.size < 0}
    unreadable_before = sum(1 for s in previous.skipped if s.size >= 0 and not s.loaded)
    return (
        stored_walk_skips == {(s.path, s.reason) for s in plan.walk.skipped} and len(plan.carried) == unreadable_before
    )


@dataclass
class _Build:
    """One build's parameters; `run` does the work with the index's build lock held."""

    folder: Path
    root: Path
    settings: IndexSettings
    progress: ProgressFn | None
    cancelled: CancelFn | None
    workers: int | None
    warm: AnalyzerConfig | None
    changed: Collection[str] | None
    kept: meaning_keep.Kept = field(default_factory=dict)  # the previous index's meaning rows, mapped

    def before_publish(self, segments: list[Segment]) -> None:
        """Given a refresh's new segments while only it sees them: the kept rows go in."""
        meaning_keep.keep(segments, self.kept)

    def run(self, previous: IndexReader | None) -> tuple[IndexReader, BuildReport]:
        walk_started = time.monotonic()
        walk = None
        if self.changed is not None and previous is not None:
            walk = rewalk(previous, self.folder, self.settings.load, self.changed)
        if walk is not None:
            walk_started = 0.0  # only the named paths were looked at: no other change is in this build
        plan = _plan(previous, walk if walk is not None else walk_folder(self.folder, self.settings.load))
        report = plan.report
        report.walk_started = walk_started
        if previous is not None and _is_current(previous, plan):
            report.rebuilt = False
            reader = previous
            if self.warm is not None:
                previous.warm(self.warm)
            if self.progress is not None:
                self.progress(len(plan.walk), len(plan.walk), previous.n_chunks, "")
        else:
            reader = self._write(previous, plan)
        report.files, report.chunks, report.tokens = len(reader.notes), reader.n_chunks, reader.n_tokens
        report.skipped = reader.skipped
        return reader, report

    def _write(self, previous: IndexReader | None, plan: _Plan) -> IndexReader:
        n_workers = self.workers if self.workers is not None else (os.cpu_count() or 1)
        if sum(f.size for f in plan.todo) < PARALLEL_MIN_BYTES:
            n_workers = 1
        with contextlib.ExitStack() as stack:
            pool = stack.enter_context(worker_pool(n_workers)) if n_workers > 1 else None
            batches = _batches(plan.todo)
            results = _run_batches(
                batches, self.settings.chunk, pool, len(plan.walk), plan.report.unchanged, self.progress, self.cancelled
            )
            _check_cancel(self.cancelled)
            if (
                pool is not None and self.warm is not None
            ):  # the workers import the derivation while this process merges
                with contextlib.suppress(BrokenProcessPool, RuntimeError):  # no workers: derived here later
                    for _ in range(n_workers):
                        pool.submit(_imported)
            skipped = _skipped(previous, plan, results)
            delta = _plan_delta(previous, plan)
            if delta is not None:
                published = write_delta(
                    self.folder, self.root, self.settings, delta, results, skipped, self.before_publish
                )
            else:
                derive = (
                    _derive_in(pool, self.warm, self.cancelled) if pool is not None and self.warm is not None else None
                )
                published = write_full(
                    self.folder,
                    self.root,
                    self.settings,
                    plan.walk.files(),
                    plan.reuse,
                    previous,
                    results,
                    skipped,
                    derive,
                    self.before_publish,
                )
        reader = IndexReader(self.folder, self.root, published.generation, published.manifest, published.segments)
        if self.warm is not None:
            reader.warm(self.warm)
        return reader


def _skipped(previous: IndexReader | None, plan: _Plan, results: list[BatchResult]) -> list[Skipped]:
    """Every skipped or re-decoded file, in path order: found by the walk, unreadable as before,
    re-decoded as before (notes kept), or found now."""
    paths = plan.walk.paths

    def reused(path: str) -> bool:  # the walk is in path order: a binary search, no map of every path
        i = bisect.bisect_left(paths, path)
        return i < len(paths) and paths[i] == path and plan.previous_idx[i] >= 0

    kept = [s for s in previous.skipped if s.size >= 0 and s.loaded and reused(s.path)] if previous else []
    skipped = plan.walk.skipped + plan.carried + kept + [s for r in results for s in r.skipped]
    return sorted(skipped, key=lambda s: s.path)


def _plan_delta(previous: IndexReader | None, plan: _Plan) -> DeltaPlan | None:
    """A delta refresh when the notes that differ from the base are few; None for a full merge."""
    if previous is None:
        return None
    walk, at = plan.walk, plan.previous_idx
    reused = at >= 0
    segment = np.zeros(len(at), np.int8)
    local = np.full(len(at), -1, np.int64)
    segment[reused] = previous.layout.note_segment[at[reused]]
    local[reused] = previous.layout.note_local[at[reused]]
    in_base = reused & (segment == 0)
    rest = np.flatnonzero(~in_base).tolist()
    if len(rest) > DELTA_MAX_NOTES or int(walk.sizes[rest].sum()) > DELTA_MAX_SHARE * int(walk.sizes.sum()):
        return None
    from_delta = {walk.paths[i]: int(local[i]) for i in rest if reused[i]}
    previous_delta = previous.segments[1] if len(previous.segments) > 1 else None
    base_rows = np.where(in_base, local, -1)
    return DeltaPlan(previous.segments[0], previous_delta, walk.paths, base_rows, from_delta, walk.files(rest))


def _batches(files: list[NoteFile]) -> list[list[NoteFile]]:
    out: list[list[NoteFile]] = []
    cur: list[NoteFile] = []
    size = 0
    for f in files:
        cur.append(f)
        size += f.size
        if size >= BATCH_BYTES or len(cur) >= BATCH_FILES:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


def _run_batches(
    batches: list[list[NoteFile]],
    options: ChunkOptions,
    pool: ProcessPoolExecutor | None,
    total_files: int,
    done_files: int,
    progress: ProgressFn | None,
    cancelled: CancelFn | None,
) -> list[BatchResult]:
    """Process batches, in the worker processes of `pool` if given; results in batch order."""
    results: list[BatchResult | None] = [None] * len(batches)
    chunks = 0

    def report(i: int, result: BatchResult) -> None:
        nonlocal done_files, chunks
        results[i] = result
        done_files += len(batches[i])
        chunks += len(result.headings)
        if progress is not None:
            progress(done_files, total_files, chunks, batches[i][-1].path)

    if pool is not None:
        try:
            pending = {pool.submit(process_batch, batch, options): i for i, batch in enumerate(batches)}
            try:
                while pending:
                    done, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                    _check_cancel(cancelled)
                    for fut in done:
                        report(pending.pop(fut), fut.result())
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        except BrokenProcessPool:
            pass  # workers could not start (e.g. no importable __main__): finish in this process
    for i, batch in enumerate(batches):
        if results[i] is None:
            _check_cancel(cancelled)
            report(i, process_batch(batch, options))
    return [r for r in results if r is not None]


def _check_cancel(cancelled: CancelFn | None) -> None:
    if cancelled is not None and cancelled():
        raise BuildCancelled("indexing was cancelled")


def _imported() -> None:
    """Nothing: a worker that runs it has imported this module (and the index code) to find it."""


def _derive_in(pool: ProcessPoolExecutor, config: AnalyzerConfig, cancelled: CancelFn | None) -> Derive:
    """Start deriving `config`'s indexes in `pool` once a generation's forward index is on disk
    (the batch workers are warm and idle while this process writes the rest of the generation);
    returns a function that waits for them. A derivation that failed is done again by `warm`."""

    def start(gen: Path) -> Callable[[], None]:
        try:
            futures = [pool.submit(derive_and_publish, str(gen), cfg) for cfg, _ in config.parts()]
        except (BrokenProcessPool, RuntimeError):  # no workers (or shut down): derived on first use
            return lambda: None

        def finish() -> None:
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.1)
                _check_cancel(cancelled)

        return finish

    return start
