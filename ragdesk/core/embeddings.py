"""Dense vectors of a segment's chunks ("the meaning index"): computed in batches, stored beside the
segment's arrays, resumed after a crash, reused on refresh.

Each segment stores its own rows (`dense-<model>.npy`, float16, one row per chunk); a reader lays
them out in its numbering (see IndexReader.dense_matrix). While a segment is being embedded its rows
live in `dense-<model>.partial.npy` with a bit per chunk in `dense-<model>.done` saying which rows
are written: each batch is flushed before its bits are, so a crash or a cancel loses at most the
batch under way, and the next run continues where this one stopped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import store
from .dense import Embedder
from .segment import ChunkTable, Segment

if TYPE_CHECKING:
    from .reader import IndexReader

ProgressFn = Callable[[int, int], None]  # chunks embedded, chunks to embed
Cancelled = Callable[[], bool]


class EmbeddingCancelled(Exception):
    """Embedding stopped on request; the batches written so far are kept for the next run."""


def stored_path(segment: Segment, name: str) -> Path:
    return segment.generation / f"dense-{name}.npy"


def _partial_paths(segment: Segment, name: str) -> tuple[Path, Path]:
    return segment.generation / f"dense-{name}.partial.npy", segment.generation / f"dense-{name}.done"


def load_rows(segment: Segment, name: str) -> np.ndarray | None:
    """The segment's stored embeddings from model `name` (memory-mapped), or None."""
    try:
        matrix = np.load(stored_path(segment, name), mmap_mode="r")
    except (OSError, ValueError):
        return None
    return matrix if matrix.shape[0] == segment.n_chunks else None


def _load_done(path: Path, n: int) -> np.ndarray | None:
    try:
        bits = np.fromfile(path, dtype=np.uint8)
    except OSError:
        return None
    return np.unpackbits(bits, count=n).astype(bool) if len(bits) == (n + 7) // 8 else None


def embedded_count(segment: Segment, name: str) -> int:
    """How many of the segment's chunks have their embedding written (all, once it is complete)."""
    if stored_path(segment, name).is_file():
        return segment.n_chunks
    done = _load_done(_partial_paths(segment, name)[1], segment.n_chunks)
    return int(done.sum()) if done is not None else 0


def _load_partial(segment: Segment, name: str, mode: str = "r") -> tuple[np.ndarray, np.ndarray] | None:
    """An unfinished run's rows (memory-mapped in `mode`) and its done-bits, or None."""
    partial, done_path = _partial_paths(segment, name)
    done = _load_done(done_path, segment.n_chunks)
    if done is None:
        return None
    try:
        rows = np.load(partial, mmap_mode=mode)
    except (OSError, ValueError):
        return None
    return (rows, done) if rows.shape[0] == segment.n_chunks else None


def embedded_rows(segment: Segment, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The segment's rows from model `name` (memory-mapped) and which are written: all of a complete
    one, the written ones of a partial one; None when it has none."""
    rows = load_rows(segment, name)
    if rows is not None:
        return rows, np.ones(segment.n_chunks, dtype=bool)
    return _load_partial(segment, name)


def _reused_rows(
    segment: Segment,
    previous: ChunkTable,
    previous_rows: np.ndarray,
    rows: np.ndarray,
    done: np.ndarray,
    previous_done: np.ndarray | None = None,
) -> None:
    """Copy into `rows` the rows of the notes `previous` holds unchanged (same path, same SHA-1, same
    chunk count) and has embedded (all of them, or those `previous_done` marks), and mark them done."""
    prev_by_path = {p: i for i, p in enumerate(previous.note_paths)}
    for ni, p in enumerate(segment.note_paths):
        pi = prev_by_path.get(p)
        if pi is None or previous.notes[pi].sha1 != segment.notes[ni].sha1:
            continue
        new, prev = segment.chunks_of_note(ni), previous.chunks_of_note(pi)
        if previous_done is not None and not previous_done[prev.start : prev.stop].all():
            continue  # not embedded yet when the previous run stopped
        if len(new) == len(prev):
            rows[new.start : new.stop] = previous_rows[prev.start : prev.stop]
            done[new.start : new.stop] = True


@dataclass
class Plan:
    """One segment's embedding under way: its rows (a file when the cache is writable, else memory)
    and which are written."""

    segment: Segment
    name: str
    rows: np.ndarray | None  # None until the first batch tells the dimension (nothing to reuse)
    done: np.ndarray
    on_disk: bool

    @property
    def todo(self) -> np.ndarray:
        return np.flatnonzero(~self.done)

    def _create(self, dim: int) -> None:
        path = _partial_paths(self.segment, self.name)[0]
        try:
            self.rows = store.preallocated_array(path, np.float16, (self.segment.n_chunks, dim))
            self.on_disk = True
        except OSError:  # a read-only cache still searches: the rows stay in memory, unstored
            self.rows = np.zeros((self.segment.n_chunks, dim), np.float16)
            self.on_disk = False

    def write(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store one batch: the rows first, then the bits that say they are there."""
        if self.rows is None:
            self._create(vectors.shape[1])
        assert self.rows is not None
        self.rows[ids] = vectors.astype(np.float16)
        self.done[ids] = True
        if self.on_disk:
            try:
                if isinstance(self.rows, np.memmap):
                    self.rows.flush()
                store.replace_atomically(_partial_paths(self.segment, self.name)[1], np.packbits(self.done).tobytes())
            except OSError:
                self.on_disk = False  # e.g. the disk filled up: finish in memory; the next run starts over

    def finish(self) -> np.ndarray:
        """The complete rows, stored under their final name when the cache is writable."""
        partial, done_path = _partial_paths(self.segment, self.name)
        if self.rows is None:  # a segment without chunks
            self.rows = np.zeros((self.segment.n_chunks, 1), np.float16)
        if self.on_disk and isinstance(self.rows, np.memmap):
            self.rows.flush()
            del self.rows
            os.replace(partial, stored_path(self.segment, self.name))
            done_path.unlink(missing_ok=True)
            rows = load_rows(self.segment, self.name)
            assert rows is not None
            return rows
        rows = self.rows
        path = stored_path(self.segment, self.name)
        tmp = store.tmp_name(path)
        try:
            store.save_array(tmp, rows)
            os.replace(tmp, path)
            partial.unlink(missing_ok=True)
            done_path.unlink(missing_ok=True)
        except OSError:
            tmp.unlink(missing_ok=True)  # a read-only cache still searches, it just embeds again
        return rows


def plan_segment(
    segment: Segment,
    name: str,
    previous: IndexReader | None = None,
    previous_rows: np.ndarray | None = None,
    previous_done: np.ndarray | None = None,
) -> Plan:
    """What is left to embed of `segment`: the partial rows of an earlier run when there are some,
    else the rows `previous` (the index this one refreshed) holds for unchanged notes (only those
    `previous_done` marks, when its meaning index was not complete)."""
    n = segment.n_chunks
    resumed = _load_partial(segment, name, "r+")
    if resumed is not None:
        return Plan(segment, name, *resumed, on_disk=True)
    plan = Plan(segment, name, None, np.zeros(n, dtype=bool), False)
    if previous is not None and previous_rows is not None and previous.settings == segment.settings and n:
        plan._create(previous_rows.shape[1])
        assert plan.rows is not None
        _reused_rows(segment, previous, previous_rows, plan.rows, plan.done, previous_done)
        if plan.done.any():
            plan.write(np.zeros(0, np.int64), np.zeros((0, previous_rows.shape[1]), np.float16))
    return plan


def embed_plans(
    plans: list[Plan],
    embedder: Embedder,
    progress: ProgressFn | None = None,
    cancelled: Cancelled | None = None,
    batch: int | None = None,
) -> list[np.ndarray]:
    """Embed what each plan lacks, `batch` chunks at a time (the embedder's own size by default),
    reporting chunks done of chunks to do over all plans; EmbeddingCancelled between batches."""
    size = batch or embedder.batch
    total = sum(len(p.todo) for p in plans)
    done = 0
    for plan in plans:
        ids = plan.todo
        for start in range(0, len(ids), size):
            if cancelled is not None and cancelled():
                raise EmbeddingCancelled
            part = ids[start : start + size]
            plan.write(part, embedder.embed(plan.segment.chunk_texts(part.tolist())))
            done += len(part)
            if progress is not None:
                progress(done, total)
    return [plan.finish() for plan in plans]
