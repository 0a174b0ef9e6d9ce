"""What a refresh keeps of the meaning index: the rows of every note it did not change, copied from
the index it refreshes into the new segments before they are published (see build_index)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import numpy as np

from .arrays import ranges
from .embeddings import Plan, embedded_rows, plan_segment
from .segment import Segment

if TYPE_CHECKING:
    from .reader import IndexReader


def model_names(segment: Segment) -> set[str]:
    """The models whose rows, complete or partial, are stored with `segment`."""
    names = set()
    for path in segment.generation.glob("dense-*.npy"):
        name = path.name[len("dense-") : -len(".npy")]
        names.add(name.removesuffix(".partial"))
    return names


COPY_ROWS = 16384  # rows copied per write by `keep` (12 MB at 384 dimensions)
Kept = dict[str, list[tuple[Segment, np.ndarray, np.ndarray]]]  # model -> (segment, its rows, written)


def map_kept(previous: IndexReader) -> Kept:
    """Every model's rows in `previous`, complete or partial, memory-mapped (no copy) before a refresh
    publishes a new generation and deletes this one (the maps stay valid on POSIX), for `keep`."""
    kept: Kept = {}
    for seg in previous.segments:
        for name in sorted(model_names(seg)):
            found = embedded_rows(seg, name)
            if found is not None:
                kept.setdefault(name, []).append((seg, *found))
    return kept


def keep(segments: list[Segment], kept: Kept) -> None:
    """Give a refresh's new `segments` the rows of their notes that a kept segment holds unchanged and
    embedded (same chunk options, path, SHA-1 and chunk count: the same chunk texts), stored as a
    partial run (finished when nothing is left): whatever a refresh merged, in any mode, and a
    rebuild for other load settings (extensions, size limit) keep what was embedded; only new and
    changed chunks are embedded again. Called before the segments are published, so no other
    process can be writing them and no lock is taken: a refresh that merges everything while
    another process holds the meaning lock for hours still keeps every row (it used to skip them,
    and the old base with its rows was deleted). A full disk leaves the rest to be embedded again."""
    for name, parts in kept.items():
        for seg in segments:
            if not seg.n_chunks:
                continue
            with contextlib.suppress(OSError):
                plan = plan_segment(seg, name)
                for old, rows, done in parts:
                    if old.settings.chunk == seg.settings.chunk:  # the load settings choose notes, not chunks
                        _copy_unchanged(seg, old, rows, done, plan)
                if plan.done.all():
                    plan.finish()


def _copy_unchanged(segment: Segment, old: Segment, rows: np.ndarray, done: np.ndarray, plan: Plan) -> None:
    """Copy into `plan` the written rows of `old`'s notes that `segment` holds with the same content
    (and so the same chunks), chunk by chunk: a note a batch boundary cut keeps its written part.
    Paths first, then the stored records' bytes (a note the refresh kept has the same record in
    both: a full merge at the scale corpus compares 31,000 in 4 ms, where parsing them took 0.6 s);
    only a note read again has its records parsed (~10 us each) for their SHA-1. The chunks are
    matched in numpy (0.21 s at the scale corpus as a loop of slices per note)."""
    old_index = dict(zip(old.note_paths, range(len(old.note_paths))))
    old_notes, new_notes = old.notes, segment.notes
    new_ids: list[int] = []
    old_ids: list[int] = []
    for ni, p in enumerate(segment.note_paths):
        oi = old_index.get(p)
        if oi is None:
            continue
        if old_notes.raw(oi) != new_notes.raw(ni) and old_notes[oi].sha1 != new_notes[ni].sha1:
            continue
        new_ids.append(ni)
        old_ids.append(oi)
    if not new_ids or (plan.rows is not None and plan.rows.shape[1] != rows.shape[1]):
        return
    new_first, old_first = np.asarray(segment.note_first_chunk), np.asarray(old.note_first_chunk)
    ni, oi = np.asarray(new_ids), np.asarray(old_ids)
    counts = new_first[ni + 1] - new_first[ni]
    same = counts == old_first[oi + 1] - old_first[oi]
    to = ranges(new_first[ni][same], counts[same])
    src = ranges(old_first[oi][same], counts[same])
    wanted = np.asarray(done)[src] & ~plan.done[to]
    to, src = to[wanted], src[wanted]
    for start in range(0, len(to), COPY_ROWS):  # bounded memory: a full rebuild copies every row
        plan.write(to[start : start + COPY_ROWS], np.asarray(rows[src[start : start + COPY_ROWS]]))
