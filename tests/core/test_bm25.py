"""BM25 numbers: the seed's worked example, and the index against a plain reference on random corpora."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdesk.core import kernels
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.bm25 import contribution, idf
from ragdesk.core.build import build_index
from ragdesk.core.chunking import ChunkOptions
from ragdesk.core.explain import TermRow, term_rows
from ragdesk.core.params import IndexSettings

from ..conftest import write_notes


def term_row(term: str, words: tuple[str, ...], n_docs: int, n_t: int, f: int, doc_len: int, avgdl: float,
             k1: float, b: float) -> TermRow:  # fmt: skip
    """One explanation row from raw statistics, through the code every search uses."""
    return term_rows(term, words, n_docs, n_t, [f], [doc_len], avgdl, k1, b)[0]


def test_seed_example_rare_term() -> None:
    row = term_row("induk", ("indukce",), n_docs=439, n_t=4, f=3, doc_len=71, avgdl=69.53, k1=1.2, b=0.75)
    assert f"{row.idf:.3f}" == "4.583"
    assert f"{row.contribution:.3f}" == "7.169"
    assert row.formula == "4.583 · 3 · 2.2 / (3 + 1.2 · 1.0159) = 7.169"


def test_seed_example_common_term() -> None:
    row = term_row("v", ("v",), n_docs=439, n_t=237, f=4, doc_len=71, avgdl=69.53, k1=1.2, b=0.75)
    assert f"{row.idf:.3f}" == "0.617"
    assert f"{row.contribution:.3f}" == "1.040"


def test_absent_terms_contribute_zero_and_say_why() -> None:
    missing = term_row("zzz", ("zzz",), 10, 0, 0, 5, 5.0, 1.2, 0.75)
    assert missing.contribution == 0.0 and not missing.in_index
    assert "not in the index" in missing.formula
    absent = term_row("a", ("a",), 10, 3, 0, 5, 5.0, 1.2, 0.75)
    assert absent.contribution == 0.0 and absent.in_index
    assert "f = 0" in absent.formula


def test_formula_edge_values() -> None:
    assert idf(1, 1) == pytest.approx(math.log(1 + 0.5 / 1.5))
    # b = 0: no length normalization at all.
    assert contribution(2.0, 3, 1000, 10, 1.2, 0.0) == pytest.approx(2.0 * 3 * 2.2 / (3 + 1.2))


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def _reference_scores(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[float]:
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = Counter(t for d in docs for t in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in dict.fromkeys(query):
            if tf[t]:
                i = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += i * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30), min_size=1, max_size=12),
    query=st.lists(st.sampled_from(WORDS + ["missing"]), min_size=1, max_size=4),
    k1=st.floats(0.1, 3.0),
    b=st.floats(0.0, 1.0),
)
def test_index_matches_reference(
    tmp_path_factory: pytest.TempPathFactory, docs: list[list[str]], query: list[str], k1: float, b: float
) -> None:
    root = tmp_path_factory.mktemp("corpus")
    notes = write_notes(root / "notes", {f"d{i:02d}.txt": " ".join(d) for i, d in enumerate(docs)})
    settings_ = IndexSettings(chunk=ChunkOptions("words", size=1000, overlap=0))
    lib, _ = build_index(notes, root / "idx", settings_, workers=1)
    ref = _reference_scores(docs, query, k1, b)
    result = lib.search(" ".join(query), analyzer=AnalyzerConfig("words"), k1=k1, b=b, k=len(docs))
    got = {h.chunk_id: h.score for h in result.hits}
    for i, expected in enumerate(ref):
        assert got.get(i, 0.0) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # Ranking: score descending, ties by chunk order; explanation rows sum to the score.
    expected_order = sorted((i for i, s in enumerate(ref) if s > 0), key=lambda i: (-ref[i], i))
    assert [h.chunk_id for h in result.hits] == expected_order
    for h in result.hits:
        assert sum(r.contribution for r in h.explain) == pytest.approx(h.score, rel=1e-12)
        # the rows, computed in arrays for all hits at once, are the scalar formula's, to the last bit
        scalar = [
            term_rows(r.term, r.words, result.n_docs, r.n_t, [r.f], [r.doc_len], r.avgdl, k1, b, r.analyzer)[0]
            for r in h.explain
        ]
        assert h.explain == scalar
    # Without the compiled kernel: the same hits, scores and explanations, to the last bit.
    with kernels.python_only():
        fallback = lib.search(" ".join(query), analyzer=AnalyzerConfig("words"), k1=k1, b=b, k=len(docs))
    assert fallback.to_json()["hits"] == result.to_json()["hits"]


def test_scores_change_with_k1_b_without_rebuild(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "n", {"a.txt": "apple apple apple pie", "b.txt": "apple " + "filler " * 40})
    lib, _ = build_index(notes, tmp_path / "idx", IndexSettings(chunk=ChunkOptions("words", 1000, 0)), workers=1)
    gen = lib.generation
    r1 = lib.search("apple", analyzer=AnalyzerConfig("words"), k1=1.2, b=0.75)
    r2 = lib.search("apple", analyzer=AnalyzerConfig("words"), k1=2.0, b=0.0)
    idf_apple = math.log(1 + 0.5 / 2.5)  # N = 2 chunks, both hold "apple"
    avgdl = (4 + 41) / 2
    assert r1.hits[0].path == r2.hits[0].path == "a.txt"  # f = 3, |D| = 4
    assert r1.hits[0].score == pytest.approx(idf_apple * 3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 4 / avgdl)))
    assert r2.hits[0].score == pytest.approx(idf_apple * 3 * 3.0 / (3 + 2.0))  # b = 0: length ignored
    assert lib.generation == gen


def _random_refs(seed: int, n_docs: int, n_query: int, weights: tuple, ties: bool) -> list:
    """Query terms over random indexes; with `ties`, equal lengths and frequencies make equal scores."""
    import numpy as np

    from ragdesk.core.postings import TermIndex
    from ragdesk.core.topk import QueryTermRef

    rng = np.random.default_rng(seed)
    indexes = []
    for _ in weights:
        n_terms = 12
        lens = (np.full(n_docs, 10) if ties else rng.integers(1, 60, n_docs)).astype(np.int32)
        docs_per_term = [
            np.sort(rng.choice(n_docs, size=rng.integers(1, n_docs + 1), replace=False)) for _ in range(n_terms)
        ]
        indptr = np.concatenate(([0], np.cumsum([len(d) for d in docs_per_term]))).astype(np.int64)
        docs = np.concatenate(docs_per_term).astype(np.int32)
        tfs = (np.ones(len(docs)) if ties else rng.integers(1, 6, len(docs))).astype(np.int32)
        indexes.append(TermIndex([f"t{i}" for i in range(n_terms)], indptr, docs, tfs, lens))
    return [
        QueryTermRef(ti, int(t), w)
        for ti, w in zip(indexes, weights)
        for t in rng.choice(12, size=n_query, replace=False)
    ]


def _assert_exhaustive_top_k(refs: list, n_docs: int, k: int, mask: Any = None) -> None:
    """Both pruned top-k implementations return exactly the exhaustive top k (of the chunks `mask`
    keeps, when given): chunks, floats, order."""
    import ragdesk.core.topk as topk_mod
    from ragdesk.core.topk import score_all, search_top_k_compiled, search_top_k_numpy, top_k

    want_docs, want_scores = top_k(*score_all(refs, n_docs, 1.2, 0.75, mask), k)
    saved = topk_mod.PRUNE_MIN_POSTINGS, topk_mod.RANGE_MIN_DF, topk_mod.range_shift
    topk_mod.PRUNE_MIN_POSTINGS = 0  # prune whenever possible, even on tiny postings
    try:
        impls = [search_top_k_numpy] + ([search_top_k_compiled] if kernels.RANKING is not None else [])
        for impl in impls:
            got_docs, got_scores = impl(refs, n_docs, 1.2, 0.75, k, mask)
            assert got_docs.tolist() == want_docs.tolist(), impl.__name__
            assert got_scores.tolist() == want_scores.tolist(), impl.__name__
        if kernels.RANKING is not None:  # again with range bounds for every term, 1 to 8 chunks per range
            topk_mod.RANGE_MIN_DF = 0
            for shift in (1, 3):
                topk_mod.range_shift = lambda n, shift=shift: shift  # type: ignore[assignment]
                got_docs, got_scores = search_top_k_compiled(refs, n_docs, 1.2, 0.75, k, mask)
                assert (got_docs.tolist(), got_scores.tolist()) == (want_docs.tolist(), want_scores.tolist()), shift
    finally:
        topk_mod.PRUNE_MIN_POSTINGS, topk_mod.RANGE_MIN_DF, topk_mod.range_shift = saved


@settings(max_examples=900, deadline=None)  # about 300 without a mask, 600 with one: as the two tests were
@given(
    seed=st.integers(0, 10_000),
    n_docs=st.integers(1, 300),
    k=st.integers(1, 15),
    n_query=st.integers(1, 6),
    weights=st.sampled_from([(1.0,), (1.0, 0.3)]),
    ties=st.booleans(),
    shape=st.sampled_from([None, None, "block", "scattered", "none", "all"]),
)
def test_pruned_top_k_equals_exhaustive(
    seed: int, n_docs: int, k: int, n_query: int, weights: tuple, ties: bool, shape: str | None
) -> None:
    """MaxScore pruning (numpy and compiled, and the kernel with range bounds) returns exactly the
    exhaustive top k, ties by chunk order; under a query's filters as a mask, exactly "score the kept
    chunks, then take the top k"."""
    import numpy as np

    mask = None
    if shape is not None:
        rng = np.random.default_rng(seed + 1)
        mask = np.zeros(n_docs, bool)
        if shape == "block":  # a folder: its notes' chunks lie side by side
            start = int(rng.integers(0, n_docs))
            mask[start : start + int(rng.integers(1, n_docs + 1))] = True
        elif shape == "scattered":  # a tag or a phrase: here and there
            mask = rng.random(n_docs) < rng.choice([0.05, 0.3, 0.8])
        elif shape == "all":
            mask[:] = True
    _assert_exhaustive_top_k(_random_refs(seed, n_docs, n_query, weights, ties), n_docs, k, mask)


@pytest.mark.parametrize(("n_docs", "k", "ties"), [(6000, 1, False), (6000, 3, True), (5, 50, False)])
def test_pruned_top_k_with_many_leaders_or_k_above_n(n_docs: int, k: int, ties: bool) -> None:
    """More chunks pass the running k-th score than the kernel's hot list holds; or k exceeds N."""
    _assert_exhaustive_top_k(_random_refs(7, n_docs, 10, (1.0, 0.3), ties), n_docs, k)


@pytest.mark.parametrize("compiled", [True, False])
def test_postings_beyond_the_last_chunk_are_reported_not_read(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged index (a chunk id past N, e.g. flipped bits in docs.npy) raises IndexDamaged,
    never reads or writes out of bounds."""
    import numpy as np

    from ragdesk.core.postings import TermIndex
    from ragdesk.core.store import IndexDamaged
    from ragdesk.core.topk import QueryTermRef, search_top_k

    if compiled and kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    if not compiled:
        monkeypatch.setattr(kernels, "RANKING", None)
    docs = np.array([0, 2, 1, 5_000_000], np.int32)  # the second term's posting names chunk 5,000,000
    ti = TermIndex(["a", "b"], np.array([0, 2, 4], np.int64), docs, np.ones(4, np.int32), np.full(3, 5, np.int32))
    ti.seed_bounds(1.2, 0.75, np.array([1.0, 1.0]))  # as stored with an index: the kernel meets the bad posting
    with pytest.raises(IndexDamaged, match="damaged"):
        search_top_k([QueryTermRef(ti, 0), QueryTermRef(ti, 1)], 3, 1.2, 0.75, 2)


def test_compiled_kernel_is_built_where_required() -> None:
    """CI sets RAGDESK_REQUIRE_KERNEL: there the compiled kernels (top k, text) must be in use, not the fallbacks."""
    import os

    if not os.environ.get("RAGDESK_REQUIRE_KERNEL"):
        pytest.skip("the compiled kernel is optional (needs a C compiler at install)")
    assert (kernels.ranking_name(), kernels.text_name()) == ("compiled", "compiled")
    assert kernels.has_walk()


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize(
    "config",
    [
        AnalyzerConfig("trigrams"),
        AnalyzerConfig("trigrams", fold_accents=True, stop_words=("en", "cs")),
        AnalyzerConfig("stems"),
        AnalyzerConfig("words", stop_words=("en",)),
    ],
)
def test_compiled_derivation_equals_the_sparse_product(
    config: AnalyzerConfig, threads: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's term-major postings (no sort needed) from its hashed trigram word map are the
    scipy product's from numpy's sorted word map, array for array, also when threads derive chunk
    ranges side by side; on the bundled notes in six languages, with stop words that leave some
    words without terms."""
    from importlib import resources

    import numpy as np

    import ragdesk.core.derive as derive_mod
    from ragdesk.core.analyzers import Analyzer

    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    monkeypatch.setattr(derive_mod, "DERIVE_THREADS", threads)
    monkeypatch.setattr(derive_mod, "DERIVE_MIN_CHUNKS", 1)
    monkeypatch.setattr(derive_mod.os, "cpu_count", lambda: threads)
    sample_notes = Path(str(resources.files("ragdesk.resources").joinpath("sample_notes")))
    lib, _ = build_index(sample_notes, tmp_path / "idx", workers=1)
    forward = lib.forward()
    compiled = derive_mod.derive_term_index(forward, Analyzer(config))
    with kernels.python_only():
        product = derive_mod.derive_term_index(forward, Analyzer(config))
    assert compiled.terms == product.terms and len(compiled.docs) > 300
    for name in ("indptr", "docs", "tfs", "doc_len"):
        got, want = getattr(compiled, name), getattr(product, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    # The kernel records the default k1/b score bounds as it fills: numpy's max_tf_weights, bit for bit.
    assert compiled._bound_cache is not None and product._bound_cache is None
    assert compiled.max_tf_weights(1.2, 0.75).tolist() == product.max_tf_weights(1.2, 0.75).tolist()


@given(
    lengths=st.lists(st.integers(0, 6), max_size=40),
    block=st.sampled_from([1, 2, 3, 7, 1 << 20]),
    seed=st.integers(0, 2**16),
)
def test_document_lengths_by_blocks_are_the_per_row_sums(lengths: list[int], block: int, seed: int) -> None:
    """|D| in an analyzer's terms, summed a block of the forward index at a time (to bound memory),
    is each row's own sum of count x terms per word, whatever the block and with empty rows anywhere."""
    import numpy as np

    from ragdesk.core.derive import weighted_row_sums

    rng = np.random.default_rng(seed)
    row_ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    ids = rng.integers(0, 9, int(row_ptr[-1])).astype(np.int32)
    counts = rng.integers(1, 5, int(row_ptr[-1])).astype(np.int32)
    per_word = rng.integers(0, 12, 9).astype(np.int64)
    want = [sum(int(counts[j]) * int(per_word[ids[j]]) for j in range(a, b)) for a, b in zip(row_ptr, row_ptr[1:])]
    got = weighted_row_sums(row_ptr, ids, counts, per_word, block=block)
    assert got.dtype == np.int64 and got.tolist() == want


@pytest.mark.parametrize(
    "config", [AnalyzerConfig("trigrams"), AnalyzerConfig("trigrams", fold_accents=True, stop_words=("en", "cs"))]
)
def test_vectorized_trigram_word_map_matches_per_word(config: AnalyzerConfig) -> None:
    from ragdesk.core.analyzers import Analyzer
    from ragdesk.core.derive import _trigram_word_map, _word_map_by_word

    vocab = ["indukce", "indukcí", "aaaa", "a", "the", "café", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "v", "x" * 40, "a"]

    def triples(word_map: tuple) -> set[tuple[int, str, int]]:
        terms, ptr, ids, mult = word_map
        return {(w, terms[ids[j]], int(mult[j])) for w in range(len(vocab)) for j in range(ptr[w], ptr[w + 1])}

    analyzer = Analyzer(config)
    fast, slow = triples(_trigram_word_map(vocab, analyzer)), triples(_word_map_by_word(vocab, analyzer))
    assert fast == slow and (2, "aaa", 2) in fast  # "_aaaa_" has "aaa" twice
    assert ((4, "_th", 1) in fast) == (not config.stop_words)  # "the" is an English stop word


@pytest.mark.parametrize(
    "config",
    [AnalyzerConfig("stems"), AnalyzerConfig("words"), AnalyzerConfig("stems", fold_accents=True, stop_words=("en",))],
)
def test_one_term_word_map_is_the_per_word_map(config: AnalyzerConfig) -> None:
    """Same terms in the same (first-seen) order, same rows; a stop word has no term."""
    from ragdesk.core.analyzers import Analyzer
    from ragdesk.core.derive import _one_term_word_map, _word_map_by_word

    vocab = ["indukce", "indukcí", "the", "café", "cafe", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "v", "indukci", "The"]
    fast, slow = _one_term_word_map(vocab, Analyzer(config)), _word_map_by_word(vocab, Analyzer(config))
    assert fast[0] == slow[0]
    for got, want in zip(fast[1:], slow[1:]):
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    if config.name == "stems" and not config.stop_words:
        assert fast[0][:3] == ["induk", "the", "café"] and fast[2].tolist()[:3] == [0, 0, 1]
    if config.stop_words:
        assert fast[1][3] == fast[1][2]  # "the" (index 2) makes no term


def test_top_k_refuses_parameters_that_make_negative_contributions() -> None:
    from ragdesk.core.topk import search_top_k

    with pytest.raises(ValueError, match="k1 >= 0 and 0 <= b <= 1"):
        search_top_k([], 5, 1.2, 1.5, 3)
    with pytest.raises(ValueError, match="k1 >= 0"):
        search_top_k([], 5, -0.1, 0.75, 3)


def test_compiled_top_k_leaves_no_trace_for_the_next_call() -> None:
    """Queries of every shape (sparse or dense, pruned or not, over fewer chunks), one after
    another, each rank exactly as an exhaustive scoring of that query alone."""
    import numpy as np

    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    rng = np.random.default_rng(7)
    n = 4000
    norms = rng.uniform(0.5, 2.0, n)

    def term(df: int, bound: float = 10.0) -> tuple:
        docs = np.sort(rng.choice(n, df, replace=False)).astype(np.int32)
        return (docs, rng.integers(1, 5, df).astype(np.int32), norms, 1.5, 1.0, bound)

    def exhaustive(q: list[tuple]) -> tuple[list[int], list[float]]:
        acc = np.zeros(n)
        for docs, tfs, nrm, term_idf, weight, _ in q:  # the kernel's operations, in its order
            f = tfs.astype(float)
            acc[docs] += weight * (term_idf * f * 2.2 / (f + nrm[docs]))
        best = sorted(np.flatnonzero(acc), key=lambda d: (-acc[d], d))[:10]
        return [int(d) for d in best], [float(acc[d]) for d in best]

    queries = [[term(3)], [term(3000), term(2500)], [term(40), term(3900)], [term(1)], [term(2000)] * 3]
    alone = [exhaustive(q) for q in queries]
    for _ in range(3):  # in sequence, each after all the others
        assert [kernels.RANKING.top_k(q, n, 1.2, 10) for q in queries] == alone
    smaller = kernels.RANKING.top_k(
        [(np.array([1, 2], np.int32), np.ones(2, np.int32), norms[:10], 1.0, 1.0, 9.0)], 10, 1.2, 5
    )
    assert sorted(smaller[0]) == [1, 2]
    assert [kernels.RANKING.top_k(q, n, 1.2, 10) for q in queries] == alone


def test_range_maxima_are_each_ranges_best_weight_rounded_up() -> None:
    """Per range of 2^shift chunks, the best f(k1+1)/(f+norm) in 255ths of the term's bound, rounded
    up (never below a contribution), 0 where the term is absent; the bound itself is 255."""
    import numpy as np

    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    docs, tfs = np.array([0, 1, 9, 17], np.int32), np.array([1, 3, 2, 1], np.int32)
    norms = np.array([1.2, 0.6, 1, 1, 1, 1, 1, 1, 1, 2.4, 1, 1, 1, 1, 1, 1, 1, 0.9])
    w = tfs * 2.2 / (tfs + norms[docs])  # 0.9167, 1.8333, 1.0, 1.1579
    top = float(w.max()) * (1 + 1e-9)
    got = list(kernels.RANKING.range_maxima(docs, tfs, norms, 1.2, 3, top, 4))
    assert got == [255, 140, 162, 0]  # ranges of 8: chunks 0-7 (best 1.8333), 8-15 (1.0), 16-17 (1.1579), none
    assert [255 * x / top for x in w[2:]] == pytest.approx([139.09, 161.05], abs=0.01)  # hence 140 and 162
    with pytest.raises(ValueError, match="out of range"):
        kernels.RANKING.range_maxima(docs, tfs, norms, 1.2, 3, top, 2)  # chunk 17 is in range 2


@pytest.mark.parametrize("n_docs", [8, 256], ids=["most-chunks-touched", "few-touched"])
def test_the_kernel_looks_up_late_terms_only_where_their_range_bounds_allow(n_docs: int) -> None:
    """A long term left for last is added to a chunk only if that chunk's range can still reach
    the top k by it: with its true range bounds the ranking is exact; with bounds of 0 the chunk it
    would lift to first place is passed over (so the kernel reads them)."""
    import numpy as np

    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    norms = np.full(n_docs, 1.2)
    rare = (np.array([0, 5], np.int32), np.array([3, 2], np.int32), norms, 5.0, 1.0, 7.86)  # 7.857, 6.875
    docs = np.arange(n_docs, dtype=np.int32)
    tfs = np.where(docs == 5, 5, 1).astype(np.int32)  # 3.0 everywhere, 5.32 in chunk 5
    bound = 3 * 5 * 2.2 / 6.2 * (1 + 1e-9)
    shift = 2
    ranges = kernels.RANKING.range_maxima(docs, tfs, norms, 1.2, shift, bound / 3, ((n_docs - 1) >> shift) + 1)
    exact = kernels.RANKING.top_k([rare, (docs, tfs, norms, 3.0, 1.0, bound, ranges)], n_docs, 1.2, 1, None, shift)
    assert exact[0] == [5] and exact[1][0] == pytest.approx(6.875 + 5.3226, abs=1e-3)
    assert exact == kernels.RANKING.top_k([rare, (docs, tfs, norms, 3.0, 1.0, bound)], n_docs, 1.2, 1)
    blind = (docs, tfs, norms, 3.0, 1.0, bound, bytes(len(ranges)))
    assert kernels.RANKING.top_k([rare, blind], n_docs, 1.2, 1, None, shift)[0] == [0]


def test_an_index_keeps_the_range_bounds_of_the_terms_used_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """Range bounds are computed once per term and kept up to RANGE_CACHE_BYTES, the least recently
    used dropped first (a long query's 100 terms must not push out what every short query asks)."""
    import ragdesk.core.postings as postings_mod

    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    ti = _random_refs(3, 200, 1, (1.0,), False)[0].index  # 12 terms over 200 chunks
    norms = ti.norms(1.2, 0.75)

    class Counting:
        def __init__(self, real: object) -> None:
            self.real, self.calls = real, 0

        def range_maxima(self, *args: object) -> bytes:
            self.calls += 1
            return self.real.range_maxima(*args)  # type: ignore[attr-defined]

    counting = Counting(kernels.RANKING)
    monkeypatch.setattr(kernels, "RANKING", counting)
    monkeypatch.setattr(postings_mod, "RANGE_CACHE_BYTES", 3 * 4)  # 200 chunks at 64 per range: 4 bytes a term
    got = {t: ti.range_maxima(t, ti.postings(t), norms, 1.2, 0.75, 6) for t in (0, 1, 2)}
    assert len(got[0]) == 4 and counting.calls == 3
    assert ti.range_maxima(0, ti.postings(0), norms, 1.2, 0.75, 6) == got[0] and counting.calls == 3  # kept
    ti.range_maxima(3, ti.postings(3), norms, 1.2, 0.75, 6)  # drops term 1, the least recently used
    assert [key[3] for key in ti._range_cache] == [2, 0, 3] and counting.calls == 4


def test_a_rows_json_holds_every_field_then_whether_it_is_indexed_and_its_formula() -> None:
    import dataclasses

    row = TermRow("induk", ("indukci",), 4, idf(439, 4), 3, 71, 69.53, 1.2, 0.75, 7.169, "stems_5", 0.5)
    want = {f.name: getattr(row, f.name) for f in dataclasses.fields(TermRow)}
    want["words"] = ["indukci"]
    want |= {"in_index": True, "formula": "0.5 × 4.583 · 3 · 2.2 / (3 + 1.2 · 1.0159) = 7.169"}
    assert row.to_json() == want and list(row.to_json()) == list(want)


def test_a_kept_chunk_only_a_late_long_term_reaches_still_ranks_first() -> None:
    """Under a mask, with range bounds: chunk 50, the kept chunks' best, is reached only by the long
    term added last (whose best posting overall, chunk 200, the mask leaves out); pruning that bounded
    the term by less than it gives a kept chunk (a tighter "kept ranges" limit tried in session 50,
    halved) dropped it."""
    import numpy as np

    import ragdesk.core.topk as topk_mod
    from ragdesk.core.postings import TermIndex
    from ragdesk.core.topk import QueryTermRef, score_all, search_top_k_compiled, top_k

    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    n = 256
    b_docs = np.array(sorted({*range(0, 256, 13), 50, 200}), np.int32)
    b_tfs = np.where(b_docs == 50, 30, np.where(b_docs == 200, 60, 1)).astype(np.int32)
    docs = np.concatenate([np.array([1, 2], np.int32), b_docs])
    tfs = np.concatenate([np.ones(2, np.int32), b_tfs])
    ti = TermIndex(["a", "b"], np.array([0, 2, len(docs)], np.int64), docs, tfs, np.full(n, 40, np.int32))
    refs = [QueryTermRef(ti, 0), QueryTermRef(ti, 1)]
    mask = np.zeros(n, bool)
    mask[:128] = True  # chunk 200, the term's best overall, is left out
    want = top_k(*score_all(refs, n, 1.2, 0.75, mask), 1)
    assert want[0].tolist() == [50]
    saved = topk_mod.RANGE_MIN_DF, topk_mod.range_shift
    topk_mod.RANGE_MIN_DF = 0
    topk_mod.range_shift = lambda n_docs: 3  # type: ignore[assignment]
    try:
        got = search_top_k_compiled(refs, n, 1.2, 0.75, 1, mask)
    finally:
        topk_mod.RANGE_MIN_DF, topk_mod.range_shift = saved
    assert (got[0].tolist(), got[1].tolist()) == (want[0].tolist(), want[1].tolist())
