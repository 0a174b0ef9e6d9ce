"""How an index reader numbers the notes and chunks of its segments.

A full build is one segment, numbered as it is (the identity). A refresh publishes a delta segment
over the last full build: the reader shows the base minus its dead notes plus the delta's notes,
numbered as a full rebuild would number them. Everything that depends on the numbering goes
through one `Layout`, so the reader has no base/delta branches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layout:
    """Merged note and chunk numbering over segments 0..n-1."""

    note_segment: np.ndarray  # per merged note: which segment holds it
    note_local: np.ndarray  # per merged note: its index in that segment
    chunk_remap: tuple[np.ndarray, ...]  # per segment: its chunk id -> merged chunk id (-1: gone)
    note_first_chunk: np.ndarray  # per merged note: its first merged chunk, plus the chunk count
    identity: bool = False  # one segment, numbered as stored

    @classmethod
    def single(cls, n_notes: int, note_first_chunk: np.ndarray) -> Layout:
        n_chunks = int(note_first_chunk[-1])
        return cls(
            np.zeros(n_notes, np.int8),
            np.arange(n_notes, dtype=np.int64),
            (np.arange(n_chunks, dtype=np.int32),),
            note_first_chunk,
            identity=True,
        )

    @classmethod
    def compose(
        cls, note_src: np.ndarray, firsts: tuple[np.ndarray, np.ndarray], chunk_notes: tuple[np.ndarray, ...]
    ) -> Layout:
        """A base and a delta segment. `note_src` lists the merged notes in order, as stored by a
        refresh: a base note index, or -1 - (delta note index). `firsts`: each segment's first chunk
        per note; `chunk_notes`: each segment's note per chunk."""
        src = np.asarray(note_src, dtype=np.int64)
        in_delta = src < 0
        segment = in_delta.astype(np.int8)
        local = np.where(in_delta, -1 - src, src)
        counts = np.zeros(len(src), np.int64)
        for s, first in enumerate(firsts):
            mask = segment == s
            counts[mask] = np.diff(first)[local[mask]]
        merged_first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        remaps = []
        for s, (first, owner) in enumerate(zip(firsts, chunk_notes)):
            mask = segment == s
            n_seg_notes = len(first) - 1
            offset = np.zeros(n_seg_notes, np.int64)
            alive = np.zeros(n_seg_notes, bool)
            offset[local[mask]] = merged_first[:-1][mask] - first[local[mask]]
            alive[local[mask]] = True
            owner = np.asarray(owner)
            remaps.append(np.where(alive[owner], np.arange(len(owner)) + offset[owner], -1).astype(np.int32))
        return cls(segment, local, tuple(remaps), merged_first)

    @property
    def n_chunks(self) -> int:
        return int(self.note_first_chunk[-1])

    def locate(self, note_idx: int) -> tuple[int, int]:
        """(segment, note index there) of a merged note."""
        return int(self.note_segment[note_idx]), int(self.note_local[note_idx])

    def per_chunk(self, rows: list[np.ndarray]) -> np.ndarray:
        """Per-chunk rows of each segment, laid out in the merged order (the identity: as they are)."""
        return self.per_chunk_all([rows])[0]

    def per_chunk_all(self, columns: list[list[np.ndarray]]) -> list[np.ndarray]:
        """`per_chunk` of several columns (spans, lines, headings) with one scatter: where each
        segment's live chunks go is worked out once, and not kept (2 MB at 180,000 chunks)."""
        if self.identity:
            return [rows[0] for rows in columns]
        scatter = []
        for remap in self.chunk_remap:
            live = np.flatnonzero(remap >= 0)
            scatter.append((remap[live], live))
        out = []
        for rows in columns:
            first = np.asarray(rows[0])
            merged = np.empty((self.n_chunks, *first.shape[1:]), first.dtype)
            flat = _as_rows(merged)
            for seg_rows, (to, live) in zip(rows, scatter):
                flat[to] = _as_rows(np.asarray(seg_rows))[live]
            out.append(merged)
        return out

    def per_note(self, values: list[np.ndarray]) -> np.ndarray:
        """Per-note values of each segment, in the merged order."""
        if self.identity:
            return values[0]
        out = np.zeros(len(self.note_segment), np.asarray(values[0]).dtype)
        for s, seg_values in enumerate(values):
            mask = self.note_segment == s
            out[mask] = np.asarray(seg_values)[self.note_local[mask]]
        return out


def _as_rows(a: np.ndarray) -> np.ndarray:
    """A C-contiguous (n, 2) int32 array seen as n int64s: numpy moves 1-D items 3-4x faster than 2-D
    rows (the merged spans of 180,000 chunks: 6-10 ms a copy, 2 ms as int64s)."""
    if a.ndim == 2 and a.flags.c_contiguous and a.shape[1] * a.itemsize == 8:
        return a.view(np.int64).reshape(len(a))
    return a
