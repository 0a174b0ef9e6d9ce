"""The exact top k chunks for a query's terms: MaxScore pruning over the terms' score bounds,
in the compiled kernel (without the GIL) or its numpy twin, the same ids and scores to the last bit."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import kernels
from .bm25 import check_params, idf_array, term_score
from .postings import MergedTermIndex, TermIndex, lookup
from .store import IndexDamaged

RECHECK_SHARE = 0.67  # pruning is checked again once the remaining bound fell by a third
FLOOR_SLACK = 1.0 - 1e-9  # on the pruning floor: a chunk within float rounding of the k-th is kept
RANGE_MIN_DF = 1024  # postings a term needs before its range bounds are worth a pass over them
RANGES_MAX = 2048  # ranges of chunks at most: 64 chunks per range, or the power of two that fits


def range_shift(n_docs: int) -> int:
    """log2 of the chunks per range for range bounds over `n_docs` chunks: 64 or more, at most RANGES_MAX ranges."""
    shift = 6
    while (n_docs - 1) >> shift >= RANGES_MAX:
        shift += 1
    return shift


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


_DAMAGED = "a posting is out of range (a chunk that does not exist, or f < 1): the index is damaged"


def _add(acc: np.ndarray, t: QueryTermRef, idf_t: float, k1: float, b: float, mask: np.ndarray | None = None) -> None:
    docs, tfs = t.index.postings(t.term_id)
    if mask is not None:  # a query's filters: chunks outside the mask get nothing, so never rank
        inside = mask[docs]
        docs, tfs = docs[inside], tfs[inside]
    if len(tfs) and tfs.min() < 1:  # as the kernel checks: a damaged file must not rank silently
        raise IndexDamaged(f"{_DAMAGED} (a term frequency below 1)")
    acc[docs] += t.weight * term_score(idf_t, tfs.astype(np.float64), t.index.norms(k1, b)[docs], k1)


def score_all(
    terms: list[QueryTermRef], n_docs: int, k1: float, b: float, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted BM25 scores of every chunk matching any term (within `mask`, a query's filters, when
    given): (chunk ids ascending, scores)."""
    acc = np.zeros(n_docs)
    try:
        for t, idf_t, _ in _ordered(terms, k1, b):
            _add(acc, t, idf_t, k1, b, mask)
    except IndexError as exc:
        raise IndexDamaged(f"{_DAMAGED} ({exc})") from exc
    hit = np.flatnonzero(acc > 0)  # every contribution is > 0, so matching chunks are exactly the non-zeros
    return hit, acc[hit]


PRUNE_MIN_POSTINGS = 2000
MASKS_SEEN_MAX = 8  # masks whose kernel form is kept (one per recent filtered query)


def search_top_k(
    terms: list[QueryTermRef], n_docs: int, k1: float, b: float, k: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The exact top k of `score_all` (within `mask`, a bool per chunk, when given): compiled when the
    kernel is built, else with numpy.

    The pruning's bounds need BM25's parameter ranges (bm25.check_params); other values are refused.
    """
    check_params(k1, b)
    try:
        if kernels.RANKING is None or k <= 0 or not n_docs:
            return search_top_k_numpy(terms, n_docs, k1, b, k, mask)
        return search_top_k_compiled(terms, n_docs, k1, b, k, mask)
    except IndexError as exc:  # numpy met a posting beyond the last chunk (the kernel raises IndexDamaged)
        raise IndexDamaged(f"{_DAMAGED} ({exc})") from exc


def search_top_k_compiled(
    terms: list[QueryTermRef], n_docs: int, k1: float, b: float, k: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """`search_top_k_numpy` in C: the same pruning, the same floats, one pass per posting.

    Merged indexes are ranked in their segments' numbering (no per-query renumbering of the base's
    postings); the kernel breaks ties and returns ids in the merged numbering.
    """
    args = []
    merged = [t.index for t in terms if isinstance(t.index, MergedTermIndex)]
    order = merged[0].seg_to_merged if merged else None
    shift = range_shift(len(order) if merged else n_docs)  # type: ignore[arg-type]
    allowed = None if mask is None else _in_ranking(mask, order)
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
            docs, scores = kernels.RANKING.top_k(args, len(order), k1, min(k, n_docs), order, shift, allowed)
        else:
            docs, scores = kernels.RANKING.top_k(args, n_docs, k1, min(k, n_docs), None, shift, allowed)
    except ValueError as exc:  # postings that do not fit the chunks: refuse rather than read out of bounds
        raise IndexDamaged(str(exc)) from exc
    return np.array(docs, dtype=np.int64), np.array(scores, dtype=np.float64)


_MASKS_SEEN: OrderedDict[tuple[int, int], tuple[np.ndarray, object, np.ndarray]] = OrderedDict()
_MASKS_LOCK = threading.Lock()


def _in_ranking(mask: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """`mask` as the kernel reads it: uint8, in the numbering it ranks in (the segments' when merged),
    made once per mask (a query's mask is one object for as long as core.query_mask keeps it): a
    merged index's renumbering costs 0.3 ms at 180,000 chunks, too much for every search."""
    key = (id(mask), id(order))
    with _MASKS_LOCK:
        seen = _MASKS_SEEN.get(key)
    if seen is not None and seen[0] is mask and seen[1] is order:
        return seen[2]
    allowed = np.ascontiguousarray(mask if order is None else mask[order]).view(np.uint8)
    with _MASKS_LOCK:
        _MASKS_SEEN[key] = (mask, order, allowed)  # held: their ids stay theirs
        while len(_MASKS_SEEN) > MASKS_SEEN_MAX:
            _MASKS_SEEN.popitem(last=False)
    return allowed


def search_top_k_numpy(
    terms: list[QueryTermRef], n_docs: int, k1: float, b: float, k: int, mask: np.ndarray | None = None
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
                            pos, found = lookup(docs, cand)
                            sel = cand[found]
                            f = tfs[pos[found]].astype(np.float64)
                            acc[sel] += t2.weight * term_score(idf2, f, t2.index.norms(k1, b)[sel], k1)
                        else:
                            _add(acc, t2, idf2, k1, b, mask)
                        cand = cand[acc[cand] + rest[j + 1] >= floor]
                    return top_k(cand, acc[cand], k)
        _add(acc, t, idf_t, k1, b, mask)
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
