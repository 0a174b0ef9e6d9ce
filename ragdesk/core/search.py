"""Queries over an index reader: ranking (BM25, dense, hybrid), rank-of, explanations, highlights.

A `Searcher` reads only what `SearchableIndex` declares of its index (an IndexReader's analyzers, term
indexes, chunks and embeddings), so every answer the window and the CLI show is computed here, the
same way.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from .analyzers import Analyzer, AnalyzerConfig, word_spans
from .bm25 import DEFAULT_B, DEFAULT_K1
from .chunking import Chunk
from .dense import DenseUnavailable, Embedder
from .explain import QueryPart, TermRow, explain_rows, query_refs
from .fusion import FUSION_DEPTH, FUSIONS, QUERY_TIME_EMBED, Fusion, FusionConfig, rrf_fuse, with_note_ranks
from .meaning_writer import embed_missing
from .modes import Mode, Resolved
from .nearest import SegmentedNearest
from .params import SearchParams
from .postings import MergedTermIndex, TermIndex
from .query import Query, as_query
from .query_mask import NoteFacts, chunk_mask
from .results import Hit, QueryTerm, SearchResult
from .secret_layout import context_of
from .topk import score_all, search_top_k

EMBEDDED_NOW: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()  # (model, chunk text) -> its row
EMBEDDED_NOW_MAX = 4096  # rows kept (6 MB): typing a query re-ranks much the same chunks
MISSING_TERMS_SHOWN = 20  # query terms no note has, named in the result's reason (then "and N more")


class SearchableIndex(Protocol):
    """What a Searcher reads of an index (IndexReader provides it): analyzers, term indexes, chunks
    and embeddings, and nothing else (tests/core/test_no_qt.py checks every read is declared here)."""

    chunk_note: np.ndarray  # chunk id -> note number
    note_first_chunk: np.ndarray  # note number -> its first chunk id (one more entry: the chunk count)

    @property
    def n_chunks(self) -> int: ...

    def analyzer(self, config: AnalyzerConfig) -> Analyzer: ...

    def term_index(self, config: AnalyzerConfig) -> TermIndex | MergedTermIndex: ...

    def chunk(self, chunk_id: int) -> Chunk: ...

    def nearest(self, name: str, partial: bool = False) -> SegmentedNearest: ...

    def meaning_ready(self, name: str) -> bool: ...

    def chunk_texts(self, chunk_ids: Sequence[int] | None = None) -> list[str]: ...

    def text_before(self, chunk_id: int, limit: int = ...) -> str: ...

    def note_facts(self) -> NoteFacts: ...


class Searcher:
    """Ranks and explains over one index (IndexReader.searcher; `reader.search(...)` is the one call the
    CLI, the window's worker, evaluation and the tests share)."""

    def __init__(self, index: SearchableIndex) -> None:
        self.index = index

    def prepare(self, query: str, config: AnalyzerConfig) -> list[QueryPart]:
        """Per single-index analyzer of `config`: its index, weight and the query's terms in it."""
        parts = []
        for cfg, weight in config.parts():
            ti = self.index.term_index(cfg)
            found = [(term, words, ti.term_id(term)) for term, words in self.index.analyzer(cfg).query_terms(query)]
            known = [tid for _, _, tid in found if tid is not None]
            n_t = dict(zip(known, ti.dfs(np.array(known, np.int64)).tolist())) if known else {}
            qterms = [(t, tuple(w), tid if n_t.get(tid, 0) > 0 else None) for t, w, tid in found]
            parts.append(QueryPart(cfg, weight, ti, qterms, [n_t.get(tid, 0) for _, _, tid in found]))
        return parts

    def mask(self, query: Query, config: AnalyzerConfig) -> np.ndarray | None:
        """The chunks `query`'s filters, phrases and exclusions let through (None: every chunk)."""
        if query.plain:
            return None
        return chunk_mask(query, self.index.note_facts(), self.lookups(config))

    def lookups(self, config: AnalyzerConfig) -> list[tuple[Analyzer, TermIndex | MergedTermIndex]]:
        """Each single-index analyzer of `config` with its term index (what a phrase is looked up in)."""
        return [(self.index.analyzer(cfg), self.index.term_index(cfg)) for cfg, _ in config.parts()]

    def search(
        self,
        query: str | Query,
        params: SearchParams | None = None,
        *,
        explain: bool = True,
        embedder: Embedder | None = None,
        partial: bool = False,
        resolved: Resolved | None = None,
        **changes: Any,
    ) -> SearchResult:
        """Rank chunks for `query`; never raises on odd queries, says why a result is empty instead.

        `params` (changed by any SearchParams field given as a keyword): "dense" mode ranks by cosine
        similarity of embeddings, "hybrid" fuses the BM25 and dense rankings by reciprocal rank
        fusion; both need an `embedder` (see core.dense). `partial`: while the meaning index is
        unfinished, the dense ranking covers the chunks embedded so far and, in hybrid, BM25's top
        QUERY_TIME_EMBED chunks embedded for this search (kept in memory; nothing is written).
        `resolved` (core.modes.resolve): the mode, embedder and partial that run, its reason said in
        the result.
        """
        q = as_query(query)
        text = q.text
        p = params or SearchParams()
        if resolved is not None:
            changes["mode"], embedder, partial = resolved.mode, resolved.embedder, resolved.partial
        if changes:
            p = replace(p, **changes)
        t0 = time.perf_counter()
        if p.mode.uses_meaning and embedder is None:
            raise DenseUnavailable(f"{p.mode} search needs an embedding backend")
        parts = self.prepare(text, p.analyzer)
        main = parts[0]  # the reason and |D| are reported for the primary analyzer
        mask = self.mask(q, p.analyzer)
        if mask is not None and not main.qterms:  # filters only: the matching notes, newest first
            return self._listing(q, p, parts, mask, t0)
        reason = None
        if not main.qterms:
            reason = "the query has no searchable words"
        elif not any(part.present for part in parts):
            reason = "none of the query terms occur in the notes"
        elif len(main.present) < len(main.qterms):
            reason = _not_in_notes([t for t, _, tid in main.qterms if tid is None])
        newest = p.sort == "newest"  # every BM25 match, or the fused list, then by date
        depth = max(p.k, FUSION_DEPTH) if p.mode.uses_meaning else (self.index.n_chunks if newest else p.k)
        docs, scores = search_top_k(query_refs(parts), self.index.n_chunks, p.k1, p.b, depth, mask)
        ranked: list[tuple[int, float, Fusion | None]] = list(zip(docs.tolist(), scores.tolist(), [None] * len(docs)))
        folded: dict[int, tuple[int, ...]] = {}
        grouped = False
        if p.mode.uses_meaning and embedder is not None:
            fusion = FUSIONS[p.fusion]
            bm25 = list(zip(docs.tolist(), scores.tolist()))
            ranked = self._dense_ranking(text, embedder, bm25, p.mode, p.k, fusion, partial, mask)
            grouped = p.group if p.group is not None else fusion.group_notes
            if grouped:
                ranked, folded = self._group_by_note(ranked)
            if p.mode is Mode.DENSE:
                reason = None if ranked else "the query has no searchable words"
        if newest:
            ranked = self._newest_first(ranked)
        top = ranked[: p.k]
        if not top and mask is not None:  # the filters leave out every chunk with its words
            reason = "nothing matches: " + q.searched_as()
        explained = explain_rows(parts, [doc for doc, _, _ in top], p.k1, p.b) if explain else [[] for _ in top]
        hits = [
            self._hit(rank, doc, score, fusion, rows, main, folded)
            for rank, ((doc, score, fusion), rows) in enumerate(zip(top, explained), start=1)
        ]
        took = (time.perf_counter() - t0) * 1000
        terms = [QueryTerm(t, w, n_t) for part in parts for (t, w, _), n_t in zip(part.qterms, part.dfs)]
        ti = main.index
        result = SearchResult(
            q.raw, p.analyzer.key, p.k1, p.b, ti.n_docs, ti.avgdl, took, hits, terms, reason, p.mode, grouped=grouped
        )
        result.parsed = q
        result.sort = p.sort
        result.left_out = self.index.analyzer(main.config).query_filter(text)
        if resolved is not None:
            result.mode_reason = resolved.reason
        return result

    def count_matches(self, query: str | Query, analyzer: AnalyzerConfig | None = None) -> int:
        """How many chunks contain at least one of the query's terms and pass its filters (the BM25
        ranking's length), for "30 of N matches". Reads each query term's postings once."""
        q = as_query(query)
        config = analyzer or AnalyzerConfig()
        parts = self.prepare(q.text, config)
        hit = np.zeros(self.index.n_chunks, dtype=bool)
        for ref in query_refs(parts):
            docs, _ = ref.index.postings(ref.term_id)
            hit[np.asarray(docs)] = True
        mask = self.mask(q, config)
        if mask is not None:  # filters only: every chunk they keep (as the listing shows their notes)
            hit = hit & mask if parts[0].qterms else mask
        return int(hit.sum())

    def _listing(
        self, q: Query, p: SearchParams, parts: list[QueryPart], mask: np.ndarray, t0: float
    ) -> SearchResult:
        """A query of filters only: each matching note once (its first chunk passing them), newest first."""
        chunks = np.flatnonzero(mask)
        notes = np.asarray(self.index.chunk_note)[chunks]
        first = np.unique(notes, return_index=True)[1]
        chunks, notes = chunks[first], notes[first]
        dates = self.index.note_facts().dates()[notes]
        order = np.lexsort((chunks, -dates))[: p.k]
        hits = [self._hit(rank, int(chunks[i]), 0.0, None, [], parts[0], {}) for rank, i in enumerate(order, 1)]
        ti = parts[0].index
        reason = None if len(chunks) else "nothing matches: " + q.searched_as()
        took = (time.perf_counter() - t0) * 1000
        result = SearchResult(q.raw, p.analyzer.key, p.k1, p.b, ti.n_docs, ti.avgdl, took, hits, [], reason, p.mode)
        result.parsed = q
        result.listed = True
        return result

    def _hit(
        self,
        rank: int,
        doc: int,
        score: float,
        fusion: Fusion | None,
        rows: list[TermRow],
        main: QueryPart,
        folded: dict[int, tuple[int, ...]],
    ) -> Hit:
        c, note = self.index.chunk(doc), int(self.index.chunk_note[doc])
        context = context_of(lambda n: self.index.text_before(doc, n), c.text)  # what decides its secrets
        length, date = int(main.index.doc_len[doc]), self.index.note_facts().date_of(note)
        return Hit(
            rank, score, doc, c.path, c.heading, c.start_line, c.end_line, length, c.text, rows, fusion,
            (c.start, c.end), c.page, folded.get(doc, ()), context, date,
        )  # fmt: skip

    def _newest_first(self, ranked: list[tuple[int, float, Fusion | None]]) -> list[tuple[int, float, Fusion | None]]:
        """`ranked` by its notes' dates, newest first (a note's chunks in their ranked order)."""
        dates = self.index.note_facts().dates()[np.asarray(self.index.chunk_note)[[doc for doc, _, _ in ranked]]]
        order = sorted(range(len(ranked)), key=lambda i: (-dates[i], i))
        return [ranked[i] for i in order]

    def _group_by_note(
        self, ranked: list[tuple[int, float, Fusion | None]]
    ) -> tuple[list[tuple[int, float, Fusion | None]], dict[int, tuple[int, ...]]]:
        """Each note once, at its best chunk's place; its other chunks in the list folded beneath it
        (so the top five are five notes)."""
        first: dict[int, int] = {}  # note -> its best chunk
        folded: dict[int, list[int]] = {}
        kept = []
        for item in ranked:
            note = int(self.index.chunk_note[item[0]])
            if note in first:
                folded[first[note]].append(item[0])
                continue
            first[note] = item[0]
            folded[item[0]] = []
            kept.append(item)
        return kept, {doc: tuple(rest) for doc, rest in folded.items() if rest}

    def _dense_ranking(
        self,
        query: str,
        embedder: Embedder,
        bm25: list[tuple[int, float]],
        mode: Mode,
        k: int,
        fusion: FusionConfig,
        partial: bool = False,
        mask: np.ndarray | None = None,
    ) -> list[tuple[int, float, Fusion | None]]:
        """Dense ranking (cosine) or its fusion with the BM25 ranking, each hit with its Fusion
        (within `mask`, the query's filters, when given)."""
        if not query.strip():
            return []
        if not partial and not self.index.meaning_ready(embedder.name):
            # asked for before any embedding (the CLI's first dense search, eval): computed first, as
            # meaning_writer does for a reader (the one caller that passes more than a SearchableIndex)
            embed_missing(self.index, embedder)  # type: ignore[arg-type]
        nearest = self.index.nearest(embedder.name, partial)
        vector = embedder.embed_query(query)
        depth = max(k, FUSION_DEPTH)
        ids, cosines = nearest.top_k(vector, depth) if mask is None else nearest.top_k_within(vector, depth, mask)
        dense = list(zip(ids.tolist(), cosines.tolist()))
        if mode is Mode.DENSE:
            bm25_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(bm25)}
            return [
                (doc, cos, Fusion(*bm25_rank.get(doc, (None, None)), i + 1, cos)) for i, (doc, cos) in enumerate(dense)
            ]
        pending = ~nearest.written if nearest.written is not None else None
        if pending is not None:
            texts = self.index.chunk_texts
            dense, pending = _with_bm25_top_embedded(embedder, vector, bm25, dense, pending, texts, depth)
        fused = rrf_fuse(bm25, dense, 2 * depth, fusion.c, fusion.dense_weight, pending)
        if fusion.note_weight and pending is None:  # unfinished: notes not embedded yet cannot be ranked
            notes = sorted({int(self.index.chunk_note[doc]) for doc, _ in fused})
            firsts = self.index.note_first_chunk
            ranges = [(int(firsts[n]), int(firsts[n + 1])) for n in notes]
            cosines_of = dict(zip(notes, nearest.summed_cosines(vector, ranges)))
            fused = with_note_ranks(fused, self.index.chunk_note, cosines_of, fusion.note_weight)
        return [(doc, f.score, f) for doc, f in fused]

    def rank_of(
        self, query: str | Query, chunk_id: int, analyzer: AnalyzerConfig, k1: float = DEFAULT_K1, b: float = DEFAULT_B
    ) -> int | None:
        """1-based rank of a chunk for `query` under `analyzer` (None when it does not match)."""
        return self.ranks_of(query, [chunk_id], analyzer, k1, b)[chunk_id]

    def ranks_of(
        self,
        query: str | Query,
        chunk_ids: list[int],
        analyzer: AnalyzerConfig,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> dict[int, int | None]:
        """`rank_of` for several chunks, the query scored once (ties by chunk id, as the search breaks
        them); a chunk the query's filters leave out has none."""
        q = as_query(query)
        refs = query_refs(self.prepare(q.text, analyzer))
        docs, scores = score_all(refs, self.index.n_chunks, k1, b, self.mask(q, analyzer))
        ranks: dict[int, int | None] = {}
        for chunk_id in chunk_ids:
            where = np.flatnonzero(docs == chunk_id)
            if not len(where):
                ranks[chunk_id] = None
                continue
            s = scores[where[0]]
            ranks[chunk_id] = int(np.sum(scores > s) + np.sum((scores == s) & (docs < chunk_id))) + 1
        return ranks

    def explain(
        self,
        query: str | Query,
        chunk_id: int,
        analyzer: AnalyzerConfig | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> list[TermRow]:
        """One row per distinct query term (per analyzer part) for `chunk_id`; they sum to its score."""
        return explain_rows(self.prepare(as_query(query).text, analyzer or AnalyzerConfig()), [chunk_id], k1, b)[0]

    def highlight_spans(
        self, text: str, query: str | Query, analyzer: AnalyzerConfig
    ) -> list[tuple[int, int, str]]:
        """(start, end, term) of the words in `text` that match the query (for highlighting).

        A word matches through trigrams only when at least half of its trigrams are query trigrams,
        so a shared "_co" does not light up every word that starts like the query.
        """
        words = as_query(query).text
        parts = []
        for cfg, _ in analyzer.parts():
            a = self.index.analyzer(cfg)
            parts.append((a.terms_of_word, {t for t, _ in a.query_terms(words)}, cfg.name == "trigrams"))
        spans: dict[tuple[int, int], str] = {}
        for start, end, word in word_spans(text):  # each word once (not a Token per trigram: 4x slower)
            for terms_of_word, terms, by_share in parts:
                word_terms = terms_of_word(word)
                hits = [t for t in word_terms if t in terms]
                if hits and (not by_share or 2 * len(hits) >= len(word_terms)):
                    spans.setdefault((start, end), hits[0])
                    break
        return sorted((s, e, term) for (s, e), term in spans.items())


def _not_in_notes(missing: list[str]) -> str:
    """The result's reason for query terms no note has: the first few, then how many more."""
    shown_terms = ", ".join(missing[:MISSING_TERMS_SHOWN])
    more = len(missing) - MISSING_TERMS_SHOWN
    return "not in the notes: " + shown_terms + (f" and {more} more" if more > 0 else "")


def _with_bm25_top_embedded(
    embedder: Embedder,
    vector: np.ndarray,
    bm25: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    pending: np.ndarray,
    texts: Callable[[list[int]], list[str]],
    depth: int,
) -> tuple[list[tuple[int, float]], np.ndarray]:
    """`dense` and `pending` with BM25's top QUERY_TIME_EMBED chunks not embedded yet embedded now (or
    taken from EMBEDDED_NOW) and ranked by cosine among the rest (rounded to float16 as stored rows
    are), the top `depth` kept."""
    missing = [doc for doc, _ in bm25[:QUERY_TIME_EMBED] if pending[doc]]
    if not missing:
        return dense, pending
    keys = [(embedder.name, text) for text in texts(missing)]
    new = [i for i, key in enumerate(keys) if key not in EMBEDDED_NOW]
    if new:
        for i, row in zip(new, embedder.embed([keys[i][1] for i in new])):
            EMBEDDED_NOW[keys[i]] = row.astype(np.float16)
    for key in keys:
        EMBEDDED_NOW.move_to_end(key)
    while len(EMBEDDED_NOW) > EMBEDDED_NOW_MAX:
        EMBEDDED_NOW.popitem(last=False)
    cosines = np.vstack([EMBEDDED_NOW[key] for key in keys]).astype(np.float32) @ vector
    ranked = sorted(dense + list(zip(missing, cosines.tolist())), key=lambda x: (-x[1], x[0]))[:depth]
    pending = pending.copy()
    pending[missing] = False
    return ranked, pending
