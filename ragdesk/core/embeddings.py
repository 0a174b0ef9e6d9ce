"""Dense vectors of a segment's chunks: computed in batches, stored beside its arrays, reused.

Each segment stores its own rows (`dense-<model>.npy`, float16, one row per chunk); a reader lays
them out in its numbering (see IndexReader.dense_matrix).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import store
from .dense import Embedder
from .segment import ChunkTable, Segment

if TYPE_CHECKING:
    from .reader import IndexReader

BATCH = 2048  # chunks embedded per call
ProgressFn = Callable[[int, int], None]  # chunks embedded, chunks to embed


def stored_path(segment: Segment, name: str) -> Path:
    return segment.generation / f"dense-{name}.npy"


def load_rows(segment: Segment, name: str) -> np.ndarray | None:
    """The segment's stored embeddings from model `name` (memory-mapped), or None."""
    try:
        matrix = np.load(stored_path(segment, name), mmap_mode="r")
    except (OSError, ValueError):
        return None
    return matrix if matrix.shape[0] == segment.n_chunks else None


def _reused_rows(segment: Segment, previous: ChunkTable, previous_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows copied from `previous` for the notes it holds unchanged (same path, same SHA-1, same
    chunk count), and a mask of the chunks still to embed."""
    rows = np.zeros((segment.n_chunks, previous_rows.shape[1]), np.float16)
    todo = np.ones(segment.n_chunks, dtype=bool)
    prev_by_path = {p: i for i, p in enumerate(previous.note_paths)}
    for ni, p in enumerate(segment.note_paths):
        pi = prev_by_path.get(p)
        if pi is None or previous.notes[pi].sha1 != segment.notes[ni].sha1:
            continue
        new, prev = segment.chunks_of_note(ni), previous.chunks_of_note(pi)
        if len(new) == len(prev):
            rows[new.start : new.stop] = previous_rows[prev.start : prev.stop]
            todo[new.start : new.stop] = False
    return rows, todo


def embed_segment(
    segment: Segment,
    embedder: Embedder,
    batch: int = BATCH,
    previous: IndexReader | None = None,
    previous_rows: np.ndarray | None = None,
    progress: ProgressFn | None = None,
) -> np.ndarray:
    """The segment's embeddings: stored ones, else computed (only for chunks `previous` lacks),
    stored and returned. A read-only cache still searches: the rows are returned unstored."""
    stored = load_rows(segment, embedder.name)
    if stored is not None:
        return stored
    rows: np.ndarray | None = None
    todo = np.ones(segment.n_chunks, dtype=bool)
    if previous is not None and previous_rows is not None and previous.settings == segment.settings:
        rows, todo = _reused_rows(segment, previous, previous_rows)
    ids = np.flatnonzero(todo)
    parts = []
    for start in range(0, len(ids), batch):
        chunk_ids = ids[start : start + batch].tolist()  # only the chunks that need embedding are read
        parts.append(embedder.embed(segment.chunk_texts(chunk_ids)).astype(np.float16))
        if progress is not None:
            progress(start + len(chunk_ids), len(ids))
    fresh = np.concatenate(parts) if parts else None
    if rows is None:
        matrix = fresh if fresh is not None else np.zeros((0, 1), np.float16)
    else:
        if fresh is not None:
            rows[ids] = fresh
        matrix = rows
    path = stored_path(segment, embedder.name)
    tmp = store.tmp_name(path)
    try:
        store.save_array(tmp, matrix)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only cache still searches, it just embeds again
    return matrix
