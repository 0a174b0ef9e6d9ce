"""Inverted indexes in numpy arrays: what tokenizing produces and what queries read.

`ForwardIndex` is what tokenizing produces: per chunk, its distinct words and counts
(chunk-major, CSR). `TermIndex` is what queries read: per term, the chunks containing it
and the term frequencies (term-major, CSR), for one analyzer (derived from the forward index:
core.derive). `MergedTermIndex` shows a base index plus a delta as one, in a full rebuild's
numbering. Both give BM25 score bounds per term and per range of chunks (core.topk uses them).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import kernels
from .bm25 import length_norms, term_score
from .lexicon import Lexicon

BOUND_SLICE = 1 << 22  # postings per slice when computing score bounds: bounded temporary memory
BOUND_HEADROOM = 1.0 + 1e-9  # on score bounds, so float rounding in a sum can never make one too tight

# Range bounds: a long term's best weight per range of chunks, so the terms a query leaves for last
# are looked up only for chunks whose ranges can still reach the top k (see _kernel.c, top_k).
RANGE_CACHE_BYTES = 4 << 20  # range bounds an index keeps (a byte per range per term), oldest dropped first


@dataclass
class ForwardIndex:
    """Per chunk (row), the word ids it contains and how often: CSR arrays."""

    vocab: Sequence[str]  # a list, or Words as stored
    row_ptr: np.ndarray  # int64, n_chunks + 1
    word_ids: np.ndarray  # int32
    counts: np.ndarray  # int32

    @property
    def n_chunks(self) -> int:
        return len(self.row_ptr) - 1


def lookup(pdocs: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of `keys` would sit in one term's (non-empty, ascending) postings, and whether it
    is there. The keys take the postings' dtype, so the postings are never cast as a whole."""
    keys = keys.astype(pdocs.dtype, copy=False)
    pos = np.minimum(np.searchsorted(pdocs, keys), len(pdocs) - 1)
    return pos, pdocs[pos] == keys


def _frequency_matrix(postings: list[tuple[np.ndarray, np.ndarray]], docs: np.ndarray) -> np.ndarray:
    """Frequencies of `docs` (columns) in each term's postings (rows; ascending ids), 0 where absent."""
    if kernels.RANKING is not None:
        pairs = [(np.asarray(d, np.int32), np.asarray(f, np.int32)) for d, f in postings]
        flat = kernels.RANKING.frequencies(pairs, np.asarray(docs, np.int32))
        return np.frombuffer(flat, dtype=np.int32).reshape(len(postings), len(docs))
    out = np.zeros((len(postings), len(docs)), np.int32)
    for row, (pdocs, ptfs) in zip(out, postings):
        if len(pdocs):
            pos, found = lookup(pdocs, docs)
            row[:] = np.where(found, ptfs[pos], 0)
    return out


_RANGE_LOCK = threading.Lock()


def n_ranges(n_docs: int, shift: int) -> int:
    """How many ranges of 2^shift chunks cover `n_docs` chunks (as the kernel counts them)."""
    return ((n_docs - 1) >> shift) + 1


class _Scored:
    """What BM25 reads from an index besides its postings: term frequencies and length norms."""

    doc_len: np.ndarray
    _norm_cache: tuple[float, float, np.ndarray] | None
    _range_cache: dict[tuple[float, float, int, int], bytes] | None = None

    def range_maxima(
        self, term_id: int, postings: tuple[np.ndarray, np.ndarray], norms: np.ndarray, k1: float, b: float, shift: int
    ) -> bytes:
        """The term's range bounds (`_kernel.range_maxima`, in 255ths of its `upper_bounds`) over
        these postings and norms: one pass over them, kept for the next query (RANGE_CACHE_BYTES)."""
        key = (k1, b, shift, term_id)
        with _RANGE_LOCK:  # the window's search thread and a dialog's may both rank
            cache = self._range_cache
            if cache is None:
                cache = self._range_cache = {}
            got = cache.pop(key, None)
            if got is not None:
                cache[key] = got  # put back last: the dict's order is the order of use
                return got
        top = float(self.upper_bounds(np.array([term_id]), np.ones(1), k1, b)[0])
        got = kernels.RANKING.range_maxima(*postings, norms, k1, shift, top, n_ranges(len(norms), shift))
        with _RANGE_LOCK:
            while cache and (len(cache) + 1) * len(got) > RANGE_CACHE_BYTES:
                del cache[next(iter(cache))]  # the least recently used
            cache[key] = got
        return got

    def upper_bounds(self, term_ids: np.ndarray, idf: np.ndarray, k1: float, b: float) -> np.ndarray:
        raise NotImplementedError

    @property
    def avgdl(self) -> float:
        raise NotImplementedError

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def frequencies(self, term_ids: Sequence[int], docs: np.ndarray) -> np.ndarray:
        """Each term's frequency (rows) in each of `docs` (columns), 0 where absent."""
        return _frequency_matrix([self.postings(t) for t in term_ids], docs)

    def norms(self, k1: float, b: float) -> np.ndarray:
        """k1 * (1 - b + b * |D| / avgdl) per chunk, cached for the last (k1, b)."""
        cached = self._norm_cache
        if cached is None or cached[0] != k1 or cached[1] != b:
            cached = (k1, b, length_norms(self.doc_len, self.avgdl, k1, b))
            self._norm_cache = cached
        return cached[2]


@dataclass
class TermIndex(_Scored):
    """Term-major postings for one analyzer, with chunk lengths in that analyzer's tokens."""

    terms: Sequence[str]  # a list as derived, a Lexicon as stored
    indptr: np.ndarray  # int64, n_terms + 1
    docs: np.ndarray  # int32 chunk ids, ascending within a term
    tfs: np.ndarray  # int32
    doc_len: np.ndarray  # int32, per chunk
    _ids: dict[str, int] | None = None
    _avgdl: float | None = None
    _norm_cache: tuple[float, float, np.ndarray] | None = None
    _bound_cache: tuple[float, float, np.ndarray] | None = None

    def __post_init__(self) -> None:
        self.indptr = np.asarray(self.indptr)  # plain views of the memory maps: cheap scalar access
        self.docs, self.tfs, self.doc_len = np.asarray(self.docs), np.asarray(self.tfs), np.asarray(self.doc_len)

    def upper_bounds(self, term_ids: np.ndarray, idf: np.ndarray, k1: float, b: float) -> np.ndarray:
        """No chunk gets more than this from each term (exact maxima, computed once per k1 and b)."""
        return idf * self.max_tf_weights(k1, b)[term_ids]

    def dfs(self, term_ids: np.ndarray) -> np.ndarray:
        """n_t of each term."""
        return self.indptr[term_ids + 1] - self.indptr[term_ids]

    def seed_bounds(self, k1: float, b: float, bounds: np.ndarray) -> None:
        """Use stored `max_tf_weights(k1, b)` instead of computing them again."""
        if len(bounds) == len(self.indptr) - 1:
            self._bound_cache = (k1, b, bounds)

    def max_tf_weights(self, k1: float, b: float) -> np.ndarray:
        """Per term, the largest f·(k1+1)/(f + norm) over its postings, for the last (k1, b) asked."""
        cached = self._bound_cache
        if cached is None or cached[0] != k1 or cached[1] != b:
            norms = self.norms(k1, b)
            out = np.zeros(len(self.indptr) - 1)
            starts = np.asarray(self.indptr[:-1])
            nonempty = np.flatnonzero(np.diff(self.indptr) > 0)
            step = BOUND_SLICE
            lo = 0
            while lo < len(nonempty):
                hi = int(np.searchsorted(starts[nonempty], starts[nonempty[lo]] + step, side="left"))
                hi = max(hi, lo + 1)
                terms = nonempty[lo:hi]
                p0, p1 = int(starts[terms[0]]), int(self.indptr[terms[-1] + 1])
                f = self.tfs[p0:p1].astype(np.float64)
                w = term_score(1.0, f, norms[self.docs[p0:p1]], k1)
                out[terms] = np.maximum.reduceat(w, starts[terms] - p0)
                lo = hi
            cached = (k1, b, out * BOUND_HEADROOM)
            self._bound_cache = cached
        return cached[2]

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    @property
    def avgdl(self) -> float:
        if self._avgdl is None:
            self._avgdl = float(self.doc_len.sum()) / self.n_docs if self.n_docs else 0.0
        return self._avgdl

    def term_id(self, term: str) -> int | None:
        """The id of `term`: a binary search in a stored index's terms, a dict made once otherwise."""
        if isinstance(self.terms, Lexicon):
            return self.terms.find(term)
        if self._ids is None:
            self._ids = {t: i for i, t in enumerate(self.terms)}
        return self._ids.get(term)

    def df(self, term_id: int) -> int:
        return int(self.indptr[term_id + 1] - self.indptr[term_id])

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = int(self.indptr[term_id]), int(self.indptr[term_id + 1])
        return self.docs[s:e], self.tfs[s:e]


class MergedTermIndex(_Scored):
    """A base index minus its dead chunks, plus a small delta index, seen in the chunk numbering
    a full rebuild would give (so N, avgdl, n_t, scores and tie order are exactly the rebuild's).

    `base_remap` / `delta_remap` give each segment chunk's id in the merged numbering (-1: dead);
    `doc_len` is already laid out in that numbering.
    Postings are mapped on demand; only terms that touch a dead chunk (`dead_terms`) are filtered,
    and only terms present in the delta are merged, so a query costs about what it costs on the base.
    """

    def __init__(
        self,
        base: TermIndex,
        delta: TermIndex,
        base_remap: np.ndarray,
        delta_remap: np.ndarray,
        doc_len: np.ndarray,
        dead_terms: set[int],
    ) -> None:
        self.base, self.delta = base, delta
        self.base_remap, self.delta_remap = base_remap, delta_remap
        self.doc_len = doc_len  # per merged chunk (the segments' lengths, laid out by the remaps)
        self.dead_terms = dead_terms
        n = len(doc_len)
        n_base = len(base.terms)
        self.new_terms: list[str] = []
        # merged term id -> the delta's id, for each delta term (found once here: a query asks it per
        # term for n_t, bounds, postings and explanations; a delta holds few terms)
        self._delta_ids: dict[int, int] = {}
        for did, t in enumerate(delta.terms):
            tid = base.term_id(t)
            if tid is None:
                tid = n_base + len(self.new_terms)
                self.new_terms.append(t)
            self._delta_ids[tid] = did
        self._new_ids = {t: n_base + i for i, t in enumerate(self.new_terms)}
        self._avgdl = float(self.doc_len.sum()) / n if n else 0.0
        self._norm_cache: tuple[float, float, np.ndarray] | None = None
        self._postings: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._bounds: dict[tuple[float, float, int], float] = {}
        # The segments' numbering: base chunks as stored, then delta chunks after them.
        self.seg_to_merged = np.concatenate((base_remap, delta_remap)).astype(np.int32)
        self.merged_to_seg = np.zeros(n, np.int64)
        live = np.flatnonzero(self.seg_to_merged >= 0)
        self.merged_to_seg[self.seg_to_merged[live]] = live
        self._seg_postings: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._dfs: dict[int, int] = {}
        self._seg_norm_cache: tuple[float, float, np.ndarray] | None = None

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    @property
    def avgdl(self) -> float:
        return self._avgdl

    @property
    def terms(self) -> list[str]:
        """Every term id's string (a copy: for inspection, not for queries)."""
        return [*self.base.terms, *self.new_terms]

    def term(self, term_id: int) -> str:
        n_base = len(self.base.terms)
        return self.base.terms[term_id] if term_id < n_base else self.new_terms[term_id - n_base]

    def term_id(self, term: str) -> int | None:
        tid = self.base.term_id(term)
        return tid if tid is not None else self._new_ids.get(term)

    def _delta_id(self, term_id: int) -> int | None:
        return self._delta_ids.get(term_id)

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        cached = self._postings.get(term_id)
        if cached is not None:
            return cached
        docs, tfs = np.zeros(0, np.int32), np.zeros(0, np.int32)
        if term_id < len(self.base.terms):
            docs, tfs = self.base.postings(term_id)
            if term_id in self.dead_terms:
                keep = self.base_remap[docs] >= 0
                docs, tfs = docs[keep], tfs[keep]
            docs = self.base_remap[docs]
        did = self._delta_id(term_id)
        if did is None:
            if term_id in self.dead_terms:
                self._postings[term_id] = (docs, tfs)
            return docs, tfs
        ddocs, dtfs = self.delta.postings(did)
        ddocs = self.delta_remap[ddocs]
        at = np.searchsorted(docs, ddocs)  # both ascending and disjoint: a merge by insertion
        merged = (np.insert(docs, at, ddocs), np.insert(tfs, at, dtfs))
        self._postings[term_id] = merged  # few terms reach here: the delta's
        return merged

    def segment_postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The term's postings in the segments' numbering: the base's arrays as stored (removed
        chunks included; `segment_norms` makes them add 0), then the delta's, shifted after them."""
        in_base = term_id < len(self.base.terms)
        did = self._delta_id(term_id)
        if did is None:
            return self.base.postings(term_id) if in_base else (np.zeros(0, np.int32), np.zeros(0, np.int32))
        cached = self._seg_postings.get(term_id)
        if cached is None:
            bdocs, btfs = self.base.postings(term_id) if in_base else (np.zeros(0, np.int32), np.zeros(0, np.int32))
            ddocs, dtfs = self.delta.postings(did)
            shifted = np.asarray(ddocs, np.int32) + np.int32(len(self.base_remap))
            cached = (np.concatenate((bdocs, shifted)), np.concatenate((btfs, dtfs)))
            self._seg_postings[term_id] = cached  # few terms reach here: the delta's
        return cached

    def range_maxima(
        self, term_id: int, postings: tuple[np.ndarray, np.ndarray], norms: np.ndarray, k1: float, b: float, shift: int
    ) -> bytes:
        """A term the delta lacks has the base's range bounds (kept by the base across refreshes):
        relative to the base's bound, which `upper_bound` only raises, and 0 past the base's chunks."""
        if self._delta_id(term_id) is not None or term_id >= len(self.base.terms):
            return super().range_maxima(term_id, postings, norms, k1, b, shift)
        got = self.base.range_maxima(term_id, postings, self.base.norms(k1, b), k1, b, shift)
        missing = n_ranges(len(norms), shift) - len(got)
        return got + bytes(missing) if missing > 0 else got

    def segment_norms(self, k1: float, b: float) -> np.ndarray:
        """`norms` in the segments' numbering; infinite for removed chunks, so they score exactly 0."""
        cached = self._seg_norm_cache
        if cached is None or cached[0] != k1 or cached[1] != b:
            out = np.full(len(self.seg_to_merged), np.inf)
            live = self.seg_to_merged >= 0
            out[live] = self.norms(k1, b)[self.seg_to_merged[live]]
            cached = self._seg_norm_cache = (k1, b, out)
        return cached[2]

    def frequencies(self, term_ids: Sequence[int], docs: np.ndarray) -> np.ndarray:
        return _frequency_matrix([self.segment_postings(t) for t in term_ids], self.merged_to_seg[docs])

    def df(self, term_id: int) -> int:
        in_base = term_id < len(self.base.terms)
        if in_base and term_id not in self.dead_terms and self._delta_id(term_id) is None:
            return self.base.df(term_id)  # most terms: untouched by the refresh
        cached = self._dfs.get(term_id)
        if cached is None:  # the base's live postings plus the delta's, without merging them
            cached = 0
            if in_base and term_id in self.dead_terms:
                cached = int(np.count_nonzero(self.base_remap[self.base.postings(term_id)[0]] >= 0))
            elif in_base:
                cached = self.base.df(term_id)
            did = self._delta_id(term_id)
            cached += self.delta.df(did) if did is not None else 0
            self._dfs[term_id] = cached
        return cached

    def dfs(self, term_ids: np.ndarray) -> np.ndarray:
        return np.array([self.df(t) for t in term_ids.tolist()], dtype=np.int64)

    def upper_bounds(self, term_ids: np.ndarray, idf: np.ndarray, k1: float, b: float) -> np.ndarray:
        return np.array([self.upper_bound(t, i, k1, b) for t, i in zip(term_ids.tolist(), idf.tolist())])

    def upper_bound(self, term_id: int, idf_t: float, k1: float, b: float) -> float:
        """A bound on the term's weight in any chunk, never below the true maximum.

        The base's stored bound was taken at the base's avgdl; a larger avgdl can only shrink a
        chunk's length norm by the ratio of the two, hence the division. The delta's postings
        are few, so their bound is exact.
        """
        key = (k1, b, term_id)
        bound = self._bounds.get(key)
        if bound is None:
            bound = 0.0
            if term_id < len(self.base.terms):
                ratio = min(1.0, self.base.avgdl / self.avgdl) if self.avgdl else 1.0
                bound = float(self.base.max_tf_weights(k1, b)[term_id]) / ratio
            did = self._delta_id(term_id)
            if did is not None:
                ddocs, dtfs = self.delta.postings(did)
                f = dtfs.astype(np.float64)
                w = term_score(1.0, f, self.norms(k1, b)[self.delta_remap[ddocs]], k1)
                bound = max(bound, float(w.max()) * BOUND_HEADROOM if len(w) else 0.0)
            self._bounds[key] = bound
        return idf_t * bound
