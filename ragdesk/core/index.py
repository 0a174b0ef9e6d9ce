"""Inverted indexes in numpy arrays.

`ForwardIndex` is what tokenizing produces: per chunk, its distinct words and counts
(chunk-major, CSR). `TermIndex` is what queries read: per term, the chunks containing it
and the term frequencies (term-major, CSR), for one analyzer. Every analyzer's
TermIndex is derived from the word-level forward index through a word -> terms map, so
the corpus is tokenized once whatever the analyzer.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import kernels
from .analyzers import Analyzer
from .arrays import ranges
from .bm25 import DEFAULT_B, DEFAULT_K1, check_params, idf_array, length_norms, term_score
from .lexicon import Lexicon, word_list
from .store import IndexDamaged, preallocated_array
from .tokenize import intern_words

DERIVE_THREADS = 4  # at most, and no more than the machine's cores
DERIVE_MIN_CHUNKS = 1000  # per thread
BOUND_SLICE = 1 << 22  # postings per slice when computing score bounds: bounded temporary memory
RECHECK_SHARE = 0.67  # pruning is checked again once the remaining bound fell by a third
BOUND_HEADROOM = 1.0 + 1e-9  # on score bounds, so float rounding in a sum can never make one too tight
FLOOR_SLACK = 1.0 - 1e-9  # on the pruning floor: a chunk within float rounding of the k-th is kept
# Range bounds: a long term's best weight per range of chunks, so the terms a query leaves for last
# are looked up only for chunks whose ranges can still reach the top k (see _kernel.c, top_k).
RANGE_MIN_DF = 1024  # postings a term needs before its range bounds are worth a pass over them
RANGES_MAX = 2048  # ranges of chunks at most: 64 chunks per range, or the power of two that fits
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


def _lookup(pdocs: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
            pos, found = _lookup(pdocs, docs)
            row[:] = np.where(found, ptfs[pos], 0)
    return out


_RANGE_LOCK = threading.Lock()


def range_shift(n_docs: int) -> int:
    """log2 of the chunks per range for range bounds over `n_docs` chunks: 64 or more, at most RANGES_MAX ranges."""
    shift = 6
    while (n_docs - 1) >> shift >= RANGES_MAX:
        shift += 1
    return shift


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


@dataclass(frozen=True)
class QueryTermRef:
    """One term of a query in one index, with the weight of that index in the score."""

    index: TermIndex | MergedTermIndex
    term_id: int
    weight: float = 1.0


def _ordered(terms: list[QueryTermRef], k1: float, b: float) -> list[tuple[QueryTermRef, float, float]]:
    """(term, idf, weighted upper bound) in the order every score is summed in.

    Computed with one array operation per index (a long query has a hundred terms), the same
    operations per term either way.
    """
    idfs, bounds, per_posting = [0.0] * len(terms), [0.0] * len(terms), [0.0] * len(terms)
    groups: dict[int, list[int]] = {}
    for i, t in enumerate(terms):
        groups.setdefault(id(t.index), []).append(i)
    for positions in groups.values():
        index = terms[positions[0]].index
        tids = np.array([terms[i].term_id for i in positions], dtype=np.int64)
        dfs = index.dfs(tids)
        idf = idf_array(index.n_docs, dfs.astype(np.float64))
        weighted = np.array([terms[i].weight for i in positions]) * index.upper_bounds(tids, idf, k1, b)
        ratio = weighted / np.maximum(dfs, 1)
        for i, idf_t, bound, r in zip(positions, idf.tolist(), weighted.tolist(), ratio.tolist()):
            idfs[i], bounds[i], per_posting[i] = idf_t, bound, r
    # Most score per posting first: the terms left for last (looked up only for the chunks that can
    # still make the top k) are then the long, low-scoring ones, and fewer postings are read.
    order = sorted(range(len(terms)), key=lambda i: -per_posting[i])
    return [(terms[i], idfs[i], bounds[i]) for i in order]


def _add(acc: np.ndarray, t: QueryTermRef, idf_t: float, k1: float, b: float) -> None:
    docs, tfs = t.index.postings(t.term_id)
    if len(tfs) and tfs.min() < 1:  # as the kernel checks: a damaged file must not rank silently
        raise IndexError("a term frequency below 1")
    acc[docs] += t.weight * term_score(idf_t, tfs.astype(np.float64), t.index.norms(k1, b)[docs], k1)


_DAMAGED = "a posting is out of range (a chunk that does not exist, or f < 1): the index is damaged"


def score_all(terms: list[QueryTermRef], n_docs: int, k1: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Weighted BM25 scores of every chunk matching any term: (chunk ids ascending, scores)."""
    acc = np.zeros(n_docs)
    try:
        for t, idf_t, _ in _ordered(terms, k1, b):
            _add(acc, t, idf_t, k1, b)
    except IndexError as exc:
        raise IndexDamaged(f"{_DAMAGED} ({exc})") from exc
    hit = np.flatnonzero(acc > 0)  # every contribution is > 0, so matching chunks are exactly the non-zeros
    return hit, acc[hit]


PRUNE_MIN_POSTINGS = 2000


def search_top_k(terms: list[QueryTermRef], n_docs: int, k1: float, b: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact top k of `score_all`: compiled when the kernel is built, else with numpy.

    The pruning's bounds need BM25's parameter ranges (bm25.check_params); other values are refused.
    """
    check_params(k1, b)
    try:
        if kernels.RANKING is None or k <= 0 or not n_docs:
            return search_top_k_numpy(terms, n_docs, k1, b, k)
        return search_top_k_compiled(terms, n_docs, k1, b, k)
    except IndexError as exc:  # numpy met a posting beyond the last chunk (the kernel raises IndexDamaged)
        raise IndexDamaged(f"{_DAMAGED} ({exc})") from exc


def search_top_k_compiled(
    terms: list[QueryTermRef], n_docs: int, k1: float, b: float, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """`search_top_k_numpy` in C: the same pruning, the same floats, one pass per posting.

    Merged indexes are ranked in their segments' numbering (no per-query renumbering of the base's
    postings); the kernel breaks ties and returns ids in the merged numbering.
    """
    args = []
    merged = [t.index for t in terms if isinstance(t.index, MergedTermIndex)]
    order = merged[0].seg_to_merged if merged else None
    shift = range_shift(len(order) if merged else n_docs)  # type: ignore[arg-type]
    for t, idf_t, bound in _ordered(terms, k1, b):
        if merged:
            docs, tfs = t.index.segment_postings(t.term_id)  # type: ignore[union-attr]
            norms = t.index.segment_norms(k1, b)  # type: ignore[union-attr]
        else:
            docs, tfs = t.index.postings(t.term_id)
            norms = t.index.norms(k1, b)
        postings = np.asarray(docs, np.int32), np.asarray(tfs, np.int32)
        ranged = len(docs) >= RANGE_MIN_DF and bound > 0
        by_range = t.index.range_maxima(t.term_id, postings, norms, k1, b, shift) if ranged else None
        args.append((*postings, norms, idf_t, t.weight, bound, by_range))
    try:
        if order is not None:
            docs, scores = kernels.RANKING.top_k(args, len(order), k1, min(k, n_docs), order, shift)
        else:
            docs, scores = kernels.RANKING.top_k(args, n_docs, k1, min(k, n_docs), None, shift)
    except ValueError as exc:  # postings that do not fit the chunks: refuse rather than read out of bounds
        raise IndexDamaged(str(exc)) from exc
    return np.array(docs, dtype=np.int64), np.array(scores, dtype=np.float64)


def search_top_k_numpy(
    terms: list[QueryTermRef], n_docs: int, k1: float, b: float, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The exact top k of `score_all`, touching far fewer postings (MaxScore-style pruning).

    Terms are added in `_ordered`'s order. Once the k-th best partial score exceeds what all
    remaining terms could still add, no untouched chunk can reach the top k: the remaining
    terms are only looked up for the chunks that still can (binary search in their postings).
    Additions happen in the same order as in `score_all`, so the scores are the same floats.
    """
    ordered = _ordered(terms, k1, b)
    acc = np.zeros(n_docs)
    # rest[i]: what terms i.. can still add at most; summed from the end so rest[-1] is exactly 0.
    rest = [0.0] * (len(ordered) + 1)
    for j in range(len(ordered) - 1, -1, -1):
        rest[j] = rest[j + 1] + ordered[j][2]
    remaining = rest[0]
    check_below = remaining  # after a failed check, wait until the bound has dropped by a third

    def touched_chunks() -> np.ndarray:
        # Every contribution is > 0. A boolean scan is several times cheaper than scanning floats.
        return np.flatnonzero(acc > 0)

    for i, (t, idf_t, _) in enumerate(ordered):
        if i and k > 0 and remaining <= check_below and t.index.df(t.term_id) >= PRUNE_MIN_POSTINGS:
            check_below = remaining * RECHECK_SHARE
            touched = touched_chunks()
            if len(touched) >= k:
                part = acc[touched]
                theta = np.partition(part, len(part) - k)[len(part) - k]
                # Keep a candidate unless it is clearly below theta: slack only keeps more (safe).
                floor = theta * FLOOR_SLACK
                if remaining < floor:
                    cand = touched[part + remaining >= floor]
                    for j, (t2, idf2, _) in enumerate(ordered[i:], start=i):
                        docs, tfs = t2.index.postings(t2.term_id)
                        if len(cand) * 16 < len(docs):  # a binary search per candidate is cheaper
                            pos, found = _lookup(docs, cand)
                            sel = cand[found]
                            f = tfs[pos[found]].astype(np.float64)
                            acc[sel] += t2.weight * term_score(idf2, f, t2.index.norms(k1, b)[sel], k1)
                        else:
                            _add(acc, t2, idf2, k1, b)
                        cand = cand[acc[cand] + rest[j + 1] >= floor]
                    return top_k(cand, acc[cand], k)
        _add(acc, t, idf_t, k1, b)
        remaining = rest[i + 1]
    hit = touched_chunks()
    return top_k(hit, acc[hit], k)


def top_k(doc_ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (score descending, ties by chunk order) without sorting everything."""
    if len(doc_ids) > k > 0:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        doc_ids, scores = doc_ids[keep], scores[keep]
    order = np.lexsort((doc_ids, -scores))[:k] if k > 0 else np.lexsort((doc_ids, -scores))
    return doc_ids[order], scores[order]


def build_word_map(vocab: Sequence[str], analyzer: Analyzer) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """For each word id, the analyzer's term ids (CSR) with multiplicities: (terms, ptr, ids, mult)."""
    vocab = word_list(vocab)
    if analyzer.config.name == "trigrams":
        return _trigram_word_map(vocab, analyzer)
    if analyzer.config.name in ("words", "stems"):
        return _one_term_word_map(vocab, analyzer)
    return _word_map_by_word(vocab, analyzer)


def _one_term_word_map(vocab: list[str], analyzer: Analyzer) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """`build_word_map` for analyzers that make one term of a word (none of a stop word): the
    word itself or its prefix, numbered in first-seen order as `_word_map_by_word` numbers them."""
    cut = analyzer.config.stem_length if analyzer.config.name == "stems" else None
    terms = [w[:cut] for w in map(analyzer.normalized_word, vocab)]  # "" for a stop word: no term
    has_term = np.fromiter(map(bool, terms), dtype=bool, count=len(terms))
    term_ids: dict[str, int] = {}
    ids = intern_words(term_ids, [t for t in terms if t])
    ptr = np.zeros(len(vocab) + 1, np.int64)
    np.cumsum(has_term, out=ptr[1:])
    return list(term_ids), ptr, ids, np.ones(len(ids), np.int32)


def _word_map_by_word(vocab: list[str], analyzer: Analyzer) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """`build_word_map` for any analyzer, one word at a time.

    Built in `array` buffers rather than lists: turning a list of millions of ints into numpy
    holds the GIL for a long time (a visible stall in the window); a buffer converts for free.
    """
    term_ids: dict[str, int] = {}
    ptr = array("q", [0])
    ids = array("i")
    mult = array("i")
    terms_of = analyzer._terms_of_word  # no memo: each word is seen once here
    for word in vocab:
        terms = terms_of(word)
        if len(terms) == 1:
            ids.append(term_ids.setdefault(terms[0], len(term_ids)))
            mult.append(1)
        elif terms:
            counts: dict[int, int] = {}
            for t in terms:
                tid = term_ids.setdefault(t, len(term_ids))
                counts[tid] = counts.get(tid, 0) + 1
            ids.extend(counts)
            mult.extend(counts.values())
        ptr.append(len(ids))
    as_np = [
        np.frombuffer(a, dtype=np.int64 if a.typecode == "q" else np.int32)
        if len(a)
        else np.zeros(0, np.int64 if a.typecode == "q" else np.int32)
        for a in (ptr, ids, mult)
    ]
    return list(term_ids), as_np[0], as_np[1], as_np[2]


def _trigram_word_map(vocab: list[str], analyzer: Analyzer) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """`build_word_map` for trigrams without a Python loop over trigrams: every padded word's
    code points in one array, each window of three packed into one integer (21 bits a code point)."""
    words = [analyzer.normalized_word(w) for w in vocab]  # accents folded, stop words ""
    if kernels.RANKING is not None:  # the same map, hashing trigrams instead of sorting them all twice
        terms, ptr, ids, mult = kernels.RANKING.trigram_word_map(words)
        return terms, np.frombuffer(ptr, np.int64), np.frombuffer(ids, np.int32), np.frombuffer(mult, np.int32)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    if not lengths.sum():
        return [], np.zeros(len(vocab) + 1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)
    padded = "".join(f"_{w}_" if w else "" for w in words)
    cp = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    starts = np.concatenate(([0], np.cumsum(np.where(lengths > 0, lengths + 2, 0))[:-1]))
    pos = ranges(starts, lengths)
    keys = (cp[pos] << np.uint64(42)) | (cp[pos + 1] << np.uint64(21)) | cp[pos + 2]
    uniq = np.unique(keys)
    term_of = np.searchsorted(uniq, keys)  # cheaper than unique's return_inverse (one sort, not two)
    word_of = np.repeat(np.arange(len(words), dtype=np.int64), lengths)
    pairs, mult = np.unique(word_of * len(uniq) + term_of, return_counts=True)  # a word's repeated trigrams
    ptr = np.concatenate(([0], np.cumsum(np.bincount(pairs // len(uniq), minlength=len(words))))).astype(np.int64)
    mask = np.uint64((1 << 21) - 1)
    chars = np.stack([uniq >> np.uint64(42), (uniq >> np.uint64(21)) & mask, uniq & mask], axis=1).astype(np.uint32)
    flat = chars.tobytes().decode("utf-32-le", "surrogatepass")
    terms = [flat[i : i + 3] for i in range(0, len(flat), 3)]
    return terms, ptr, (pairs % len(uniq)).astype(np.int32), mult.astype(np.int32)


def _in_threads(calls: list[Callable[[], object]]) -> None:
    """Run calls side by side in threads (for kernels that release the GIL); the first error is raised."""
    if len(calls) == 1:
        calls[0]()
        return
    with ThreadPoolExecutor(len(calls)) as pool:
        for fut in [pool.submit(call) for call in calls]:
            fut.result()


def _segment_sums(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Sums of values[ptr[i]:ptr[i+1]] for every i, in int64 (empty segments give 0)."""
    cum = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
    return cum[ptr[1:]] - cum[ptr[:-1]]


def derive_term_index(forward: ForwardIndex, analyzer: Analyzer, out_dir: Path | None = None) -> TermIndex:
    """Build one analyzer's term-major index from the word-level forward index.

    Per term, the chunks containing any of its words, with the summed counts x multiplicities.
    The compiled kernel walks the chunks twice (count, then fill: chunk ids come out ascending,
    nothing to sort), in threads over chunk ranges; without it scipy takes the sparse product
    (terms x words) @ (words x chunks) term-major and sorts each row. Both give the same arrays
    (tested). The kernel also records the score bounds for the default k1 and b as it goes, and
    with `out_dir` it writes the postings straight into docs.npy and tfs.npy there (memory-mapped)
    instead of copying them out later.
    """
    terms, mptr, mids, mmult = build_word_map(forward.vocab, analyzer)
    n, v = forward.n_chunks, len(forward.vocab)
    row_ptr = np.asarray(forward.row_ptr, dtype=np.int64)
    word_ids, counts = np.asarray(forward.word_ids, dtype=np.int32), np.asarray(forward.counts, dtype=np.int32)
    tokens_per_word = _segment_sums(mmult, mptr)  # how many terms each word makes
    doc_len = _segment_sums(counts * tokens_per_word[word_ids], row_ptr)  # |D| in this analyzer's terms
    kernel = kernels.RANKING
    if kernel is not None:
        args = (row_ptr, word_ids, counts, mptr.astype(np.int64), mids.astype(np.int32), mmult.astype(np.int32))
        # Chunk ranges with about equal postings, derived side by side in threads (the kernel runs
        # without the GIL): range i's postings of a term go after those of ranges before it.
        parts = max(1, min(os.cpu_count() or 1, DERIVE_THREADS, n // DERIVE_MIN_CHUNKS))
        edges = np.searchsorted(row_ptr, np.linspace(0, row_ptr[-1], parts + 1)[1:-1]).tolist()
        spans = list(zip([0, *edges], [*edges, n]))
        at = [np.zeros(len(terms), np.int64) for _ in spans]
        _in_threads([lambda i=i: kernel.postings_by_term(*args, *spans[i], at[i]) for i in range(parts)])
        indptr = np.zeros(len(terms) + 1, np.int64)
        np.cumsum(np.sum(at, axis=0), out=indptr[1:])
        nnz = int(indptr[-1])
        if out_dir is not None:  # the files being published: no copy of the postings later
            docs = preallocated_array(out_dir / "docs.npy", np.int32, (nnz,))
            tfs = preallocated_array(out_dir / "tfs.npy", np.int32, (nnz,))
        else:
            docs, tfs = np.empty(nnz, np.int32), np.empty(nnz, np.int32)
        ti = TermIndex(terms, indptr, docs, tfs, doc_len.astype(np.int32))
        norms = ti.norms(DEFAULT_K1, DEFAULT_B)
        bounds = np.zeros((parts, len(terms)))
        offsets = np.cumsum([indptr[:-1], *at[:-1]], axis=0)  # where each range starts writing each term
        fill = [
            lambda i=i: kernel.postings_by_term(*args, *spans[i], offsets[i], docs, tfs, norms, bounds[i], DEFAULT_K1)
            for i in range(parts)
        ]
        _in_threads(fill)
        ti.seed_bounds(DEFAULT_K1, DEFAULT_B, bounds.max(axis=0) * BOUND_HEADROOM)
        return ti
    from scipy import sparse  # only without the compiled kernel: ~0.2-0.4 s of every start otherwise

    chunk_words = sparse.csr_matrix((counts, word_ids, row_ptr), shape=(n, v))
    word_map = sparse.csr_matrix((mmult, mids, mptr), shape=(v, len(terms)))
    by_term = word_map.T.tocsr() @ chunk_words.T.tocsr()
    by_term.sort_indices()
    return TermIndex(
        terms,
        by_term.indptr.astype(np.int64),
        by_term.indices.astype(np.int32, copy=False),
        by_term.data.astype(np.int32, copy=False),
        doc_len.astype(np.int32),
    )


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


def terms_of_rows(forward: ForwardIndex, rows: np.ndarray, analyzer: Analyzer) -> set[str]:
    """Every term the analyzer makes of the words in the given forward-index rows."""
    if not len(rows):
        return set()
    ptr = np.asarray(forward.row_ptr)
    word_ids = np.unique(np.asarray(forward.word_ids)[ranges(ptr[rows], np.diff(ptr)[rows])])
    return {t for w in word_ids.tolist() for t in analyzer._terms_of_word(forward.vocab[w])}
