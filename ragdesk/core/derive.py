"""Deriving an analyzer's term index from the word-level forward index: each word's terms
(a word -> terms map), then the postings per term, in threads; the corpus is tokenized once
whatever the analyzer."""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from . import kernels
from .analyzers import Analyzer
from .arrays import ranges
from .bm25 import DEFAULT_B, DEFAULT_K1
from .fileio import preallocated_array
from .lexicon import word_list
from .postings import BOUND_HEADROOM, ForwardIndex, TermIndex
from .tokenize import intern_words

DERIVE_THREADS = 4  # at most, and no more than the machine's cores
DERIVE_MIN_CHUNKS = 1000  # per thread


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


def segment_sums(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Sums of values[ptr[i]:ptr[i+1]] for every i, in int64 (empty segments give 0)."""
    cum = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
    return cum[ptr[1:]] - cum[ptr[:-1]]


def weighted_row_sums(
    row_ptr: np.ndarray, ids: np.ndarray, counts: np.ndarray, weight: np.ndarray, block: int = 1 << 20
) -> np.ndarray:
    """Per row i, the sum of counts[j] * weight[ids[j]] over j in [row_ptr[i], row_ptr[i+1]), int64.
    Rows a block of about `block` entries at a time: whole, the weights, products and running sum
    were three int64 copies of the forward index at once (at 9.9 M entries, a 281 MB peak; 89 MB now)."""
    n = len(row_ptr) - 1
    out = np.zeros(n, np.int64)
    starts = np.searchsorted(row_ptr, np.arange(0, int(row_ptr[-1]), block), side="right") - 1
    edges = [*dict.fromkeys(starts.tolist()), n] if n else [0]
    for r0, r1 in zip(edges, edges[1:]):
        lo, hi = int(row_ptr[r0]), int(row_ptr[r1])
        values = counts[lo:hi].astype(np.int64) * weight[ids[lo:hi]]
        out[r0:r1] = segment_sums(values, row_ptr[r0 : r1 + 1] - lo)
    return out


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
    tokens_per_word = segment_sums(mmult, mptr)  # how many terms each word makes
    doc_len = weighted_row_sums(row_ptr, word_ids, counts, tokens_per_word)  # |D| in this analyzer's terms
    kernel = kernels.RANKING
    if kernel is not None:
        word_map = (
            mptr.astype(np.int64, copy=False),
            mids.astype(np.int32, copy=False),
            mmult.astype(np.int32, copy=False),
        )
        args = (row_ptr, word_ids, counts, *word_map)
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


def terms_of_rows(forward: ForwardIndex, rows: np.ndarray, analyzer: Analyzer) -> set[str]:
    """Every term the analyzer makes of the words in the given forward-index rows."""
    if not len(rows):
        return set()
    ptr = np.asarray(forward.row_ptr)
    word_ids = np.unique(np.asarray(forward.word_ids)[ranges(ptr[rows], np.diff(ptr)[rows])])
    return {t for w in word_ids.tolist() for t in analyzer._terms_of_word(forward.vocab[w])}
