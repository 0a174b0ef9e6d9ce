"""Strings by id kept as one "\\n"-joined UTF-8 blob: a segment's words, an analyzer's terms.

An opened index holds the blob, not a list and a dict of strs (the scale corpus's 280,000 stem
and trigram terms are 36 MB as a list and a dict; its 273,000 words about as much): `Words` decodes
the one asked for, and `Lexicon` also finds a term's id by binary search over the ids in sorted
order (compiled in `_text.c`, with a Python twin).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

import numpy as np

from . import kernels


class Words(Sequence[str]):
    """A segment's words by id, from its "\\n"-joined UTF-8 blob: one looked up is one decoded (a
    refresh reads the words of the few edited chunks); walking them all decodes them all once and
    keeps the list."""

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._starts: np.ndarray | None = None  # see _offsets
        self._all: list[str] | None = None

    def __len__(self) -> int:
        return len(self._all) if self._all is not None else len(self._offsets()) - 1

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if self._all is not None:
            return self._all[i]
        starts = self._offsets()
        n = len(starts) - 1
        if not -n <= i < n:
            raise IndexError(f"word id {i} out of range ({n} words)")
        i %= n
        return self._blob[int(starts[i]) : int(starts[i + 1]) - 1].decode("utf-8")

    def _offsets(self) -> np.ndarray:
        """Where each word starts, then the blob's length + 1 (one numpy pass, kept)."""
        if self._starts is None:
            if not self._blob:
                self._starts = np.zeros(1, np.int64)
            else:
                newlines = np.flatnonzero(np.frombuffer(self._blob, np.uint8) == 10)
                self._starts = np.concatenate(([0], newlines + 1, [len(self._blob) + 1]))
        return self._starts

    def __iter__(self) -> Iterator[str]:
        return iter(self.all())

    def all(self) -> list[str]:
        if self._all is None:
            self._all = self._blob.decode("utf-8").split("\n") if self._blob else []
            self._starts = None
        return self._all


class Lexicon(Words):
    """An analyzer's terms by id, and the id of a term: a binary search in the blob over the ids
    sorted by their UTF-8 bytes (stored with the index; computed once when an older index lacks it)."""

    def __init__(self, blob: bytes, order: np.ndarray | None = None) -> None:
        super().__init__(blob)
        self._order = order

    def order(self) -> np.ndarray:
        """Term ids sorted by their UTF-8 bytes, which is the order of their code points."""
        if self._order is None:
            self._order = sorted_ids(self.all())
        return self._order

    def find(self, term: str) -> int | None:
        """The id of `term`, or None when the index has no such term. Every query term is looked up,
        so the arrays are read from their attributes once made: 0.37 µs a call, against 0.71 µs
        through the methods (a dict look-up was 0.06 µs, in 36 MB per opened index)."""
        order = self._order if self._order is not None else self.order()
        starts = self._starts if self._starts is not None else self._offsets()
        text = kernels.TEXT
        found = (
            text.find_term(self._blob, starts, order, term)
            if text is not None
            else _find(self._blob, starts, order, term)
        )
        return found if found >= 0 else None


def sorted_ids(terms: Sequence[str]) -> np.ndarray:
    """int32 ids of `terms` in the order of their strings (what `Lexicon` searches)."""
    terms = word_list(terms)
    return np.array(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int32)


def _find(blob: bytes, starts: np.ndarray, order: np.ndarray, term: str) -> int:
    """`_text.find_term`'s Python twin: -1 when `term` is not there."""
    key = term.encode("utf-8")

    def at(j: int) -> bytes:
        i = int(order[j])
        return blob[int(starts[i]) : int(starts[i + 1]) - 1]

    j = bisect_left(range(len(order)), key, key=at)
    return int(order[j]) if j < len(order) and at(j) == key else -1


def word_list(words: Sequence[str]) -> list[str]:
    """`words` as a list (what the compiled kernels take), decoded once where they are Words."""
    if isinstance(words, Words):
        return words.all()
    return words if isinstance(words, list) else list(words)
