"""A segment's note table read lazily, and the note tables of a base and a delta in merged order:
sequences of NoteRecord fetched one at a time, so opening a large index stays cheap."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, overload

import numpy as np

from . import store
from .tokenize import NoteRecord


class HasNotes(Protocol):
    notes: Sequence[NoteRecord]


class _Records(Sequence[NoteRecord]):
    """A read-only sequence of note records, fetched one at a time by `_get`."""

    def _get(self, i: int) -> NoteRecord:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> NoteRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[NoteRecord]: ...
    def __getitem__(self, i: int | slice) -> NoteRecord | list[NoteRecord]:
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(len(self)))]
        return self._get(i + len(self) if i < 0 else i)


class LazyNotes(_Records):
    """The notes table, parsed a record at a time on first use: opening a large index stays cheap
    (and light on the GIL, which the window's thread shares)."""

    def __init__(self, path: Path, count: int) -> None:
        try:
            self._lines = path.read_bytes().split(b"\n")[:count]
        except OSError as exc:
            raise store.IndexDamaged(f"cannot read {path.name}: {exc}") from exc
        if len(self._lines) != count:
            raise store.IndexDamaged(f"{path.name} has {len(self._lines)} notes, expected {count}")
        self._cache: dict[int, NoteRecord] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def raw(self, i: int) -> bytes:
        """Record `i` as stored, unparsed: a note a refresh kept has the same bytes in every segment
        that holds it (what `meaning_keep.keep` compares first)."""
        return self._lines[i]

    def _get(self, i: int) -> NoteRecord:
        note = self._cache.get(i)
        if note is None:
            try:
                note = NoteRecord(**json.loads(self._lines[i].decode("utf-8", "surrogatepass")))
            except (ValueError, TypeError) as exc:
                raise store.IndexDamaged(f"damaged note record {i}: {exc}") from exc
            self._cache[i] = note
        return note


class MergedNotes(_Records):
    """Note records of several segments in a merged order: (segment, note index there) per note."""

    def __init__(self, segments: Sequence[HasNotes], note_segment: np.ndarray, note_local: np.ndarray) -> None:
        self._segments, self._segment, self._local = segments, note_segment, note_local

    def __len__(self) -> int:
        return len(self._segment)

    def _get(self, i: int) -> NoteRecord:
        return self._segments[int(self._segment[i])].notes[int(self._local[i])]
