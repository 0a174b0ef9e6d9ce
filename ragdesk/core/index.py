"""Inverted indexes in numpy arrays.

`ForwardIndex` is what tokenizing produces: per chunk, its distinct words and counts
(chunk-major, CSR). `TermIndex` is what queries read: per term, the chunks containing it
and the term frequencies (term-major, CSR), for one analyzer. Every analyzer's
TermIndex is derived from the word-level forward index through a word -> terms map, so
the corpus is tokenized once whatever the analyzer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analyzers import Analyzer
from .bm25 import contributions, idf_array, length_norms


@dataclass
class ForwardIndex:
    """Per chunk (row), the word ids it contains and how often: CSR arrays."""

    vocab: list[str]
    row_ptr: np.ndarray  # int64, n_chunks + 1
    word_ids: np.ndarray  # int32
    counts: np.ndarray  # int32

    @property
    def n_chunks(self) -> int:
        return len(self.row_ptr) - 1


def _csr_gather(ptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the entries of `rows` in a CSR layout, and each row's length."""
    lens = (ptr[rows + 1] - ptr[rows]).astype(np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64), lens
    starts = np.repeat(ptr[rows] - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return starts + np.arange(total, dtype=np.int64), lens


@dataclass
class TermIndex:
    """Term-major postings for one analyzer, with chunk lengths in that analyzer's tokens."""

    terms: list[str]
    indptr: np.ndarray  # int64, n_terms + 1
    docs: np.ndarray  # int32 chunk ids, ascending within a term
    tfs: np.ndarray  # int32
    doc_len: np.ndarray  # int32, per chunk
    _ids: dict[str, int] | None = None
    _norm_cache: tuple[float, float, np.ndarray] | None = None

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    @property
    def avgdl(self) -> float:
        return float(self.doc_len.sum()) / self.n_docs if self.n_docs else 0.0

    @property
    def ids(self) -> dict[str, int]:
        if self._ids is None:
            self._ids = {t: i for i, t in enumerate(self.terms)}
        return self._ids

    def term_id(self, term: str) -> int | None:
        return self.ids.get(term)

    def df(self, term_id: int) -> int:
        return int(self.indptr[term_id + 1] - self.indptr[term_id])

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = int(self.indptr[term_id]), int(self.indptr[term_id + 1])
        return self.docs[s:e], self.tfs[s:e]

    def tf(self, term_id: int, doc: int) -> int:
        docs, tfs = self.postings(term_id)
        i = int(np.searchsorted(docs, doc))
        return int(tfs[i]) if i < len(docs) and docs[i] == doc else 0

    def norms(self, k1: float, b: float) -> np.ndarray:
        """k1 * (1 - b + b * |D| / avgdl) per chunk, cached for the last (k1, b)."""
        cached = self._norm_cache
        if cached is None or cached[0] != k1 or cached[1] != b:
            cached = (k1, b, length_norms(self.doc_len, self.avgdl, k1, b))
            self._norm_cache = cached
        return cached[2]

    def scores(self, term_ids: list[int], k1: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        """BM25 scores of every chunk containing at least one term: (chunk ids, scores)."""
        n = self.n_docs
        if not term_ids or n == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        norms = self.norms(k1, b)
        dfs = np.array([self.df(t) for t in term_ids], dtype=np.float64)
        idfs = idf_array(n, dfs)
        acc = np.zeros(n)
        touched = np.zeros(n, dtype=bool)
        for t, idf_t in zip(term_ids, idfs):
            docs, tfs = self.postings(t)
            acc[docs] += contributions(float(idf_t), tfs.astype(np.float64), norms[docs], k1)
            touched[docs] = True
        hit = np.flatnonzero(touched)
        return hit, acc[hit]


def top_k(doc_ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (score descending, ties by chunk order) without sorting everything."""
    if len(doc_ids) > k > 0:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        doc_ids, scores = doc_ids[keep], scores[keep]
    order = np.lexsort((doc_ids, -scores))[:k] if k > 0 else np.lexsort((doc_ids, -scores))
    return doc_ids[order], scores[order]


def build_word_map(vocab: list[str], analyzer: Analyzer) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """For each word id, the analyzer's term ids (CSR) with multiplicities: (terms, ptr, ids, mult)."""
    term_ids: dict[str, int] = {}
    ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    ids: list[int] = []
    mult: list[int] = []
    terms_of = analyzer._terms_of_word  # no memo: each word is seen once here
    for i, word in enumerate(vocab):
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
        ptr[i + 1] = len(ids)
    return list(term_ids), ptr, np.array(ids, dtype=np.int32), np.array(mult, dtype=np.int32)


def derive_term_index(forward: ForwardIndex, analyzer: Analyzer) -> TermIndex:
    """Build one analyzer's term-major index from the word-level forward index."""
    terms, mptr, mids, mmult = build_word_map(forward.vocab, analyzer)
    n = forward.n_chunks
    chunk_of = np.repeat(np.arange(n, dtype=np.int32), np.diff(forward.row_ptr))
    idx, lens = _csr_gather(mptr, forward.word_ids.astype(np.int64))
    t_ids = mids[idx]
    t_docs = np.repeat(chunk_of, lens)
    t_tfs = np.repeat(forward.counts, lens) * mmult[idx]
    doc_len = np.bincount(t_docs, weights=t_tfs, minlength=n).astype(np.int32)
    # Sort by (term, chunk); chunk order is already ascending, so a stable sort by term suffices.
    order = np.argsort(t_ids, kind="stable")
    t_ids, t_docs, t_tfs = t_ids[order], t_docs[order], t_tfs[order]
    # Merge repeated (term, chunk) pairs (two words sharing a stem in one chunk).
    if len(t_ids):
        new = np.empty(len(t_ids), dtype=bool)
        new[0] = True
        new[1:] = (t_ids[1:] != t_ids[:-1]) | (t_docs[1:] != t_docs[:-1])
        starts = np.flatnonzero(new)
        t_tfs = np.add.reduceat(t_tfs, starts).astype(np.int32)
        t_ids, t_docs = t_ids[starts], t_docs[starts]
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(t_ids, minlength=len(terms)), out=indptr[1:])
    return TermIndex(terms, indptr, t_docs.astype(np.int32), t_tfs.astype(np.int32), doc_len)
