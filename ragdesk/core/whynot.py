""" "Why not this note?": where the note a person expected ranks for a query, and why not higher.

Elasticsearch's _explain answers this for one document; here it is the note's best chunk, its rank
in BM25 (and in the fused ranking when meaning search ran), each query term's n_t, idf, f and
contribution beside the top hit's, the query words that vanished in analysis or occur in no note,
and how far its score is below the k-th result's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from .dense import FUSION_DEPTH, Embedder
from .explain import TermRow
from .params import SearchParams
from .paths import shown
from .search import explain_rows

_WORD = re.compile(r"\w+")


class NotIndexed(LookupError):
    """The note named is not in the index (not found, or skipped: the message says why)."""


@dataclass
class WhyNot:
    path: str
    chunk_id: int  # the note's best chunk for the query
    rank: int | None  # in the mode that ran (None: not among the ranked)
    bm25_rank: int | None  # None: no query term in the note
    dense_rank: int | None  # None: no meaning search, or beyond its depth
    score: float  # BM25 score of that chunk
    terms: list[TermRow]
    top_terms: list[TermRow]  # the top hit's rows, side by side
    top_chunk_id: int | None
    missing_terms: list[str]  # query words that vanished in analysis, terms in no note, terms not in the chunk
    gap_to_k: float  # k-th result's BM25 score minus this chunk's (<= 0: it is within the top k)
    k: int = 10
    vanished: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": shown(self.path),
            "rank": self.rank,
            "chunk_id": self.chunk_id,
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
            "score": self.score,
            "terms": [r.to_json() for r in self.terms],
            "top_chunk_id": self.top_chunk_id,
            "top_terms": [r.to_json() for r in self.top_terms],
            "missing_terms": self.missing_terms,
            "gap_to_k": self.gap_to_k,
            "k": self.k,
        }


def why_not(
    lib: Any,
    query: str,
    path: str,
    params: SearchParams | None = None,
    embedder: Embedder | None = None,
    partial: bool = False,
) -> WhyNot:
    """Explain where note `path` (relative to the folder) ranks for `query` and why not higher
    (higher than the top `params.k`, in `params.mode`; `partial`: as IndexReader.search)."""
    params = params or SearchParams()
    config, k1, b, k, mode = params.analyzer, params.k1, params.b, params.k, params.mode
    note = lib.note_index(path)
    if note is None:
        skipped = next((s for s in lib.skipped if s.path == path and not s.loaded), None)
        why = f"it was skipped: {skipped.reason}" if skipped else "no such note in the index"
        raise NotIndexed(f"{path} is not indexed ({why})")
    parts = lib.prepare(query, config)
    chunks = list(lib.chunks_of_note(note))
    if not chunks:
        raise NotIndexed(f"{path} is not indexed (it has no text to search)")
    rows = explain_rows(parts, chunks, k1, b)
    scores = [sum(r.contribution for r in rs) for rs in rows]
    best = max(range(len(chunks)), key=lambda i: (scores[i], -i))
    chunk, score = chunks[best], scores[best]
    depth = max(k, FUSION_DEPTH if mode != "bm25" else k)
    result = lib.search(query, replace(params, k=depth), embedder=embedder, partial=partial)
    bm25_rank = lib.rank_of(query, chunk, config, k1, b) if score > 0 else None
    rank, dense_rank = bm25_rank, None
    if mode != "bm25":
        hit = next((h for h in result.hits if h.chunk_id == chunk), None)
        rank = hit.rank if hit is not None else None
        dense_rank = hit.fusion.dense_rank if hit is not None and hit.fusion is not None else None
    top = result.hits[0] if result.hits else None
    bm25_of = [sum(r.contribution for r in h.explain) for h in result.hits[:k]]
    kth = sorted(bm25_of, reverse=True)[k - 1] if len(bm25_of) >= k else 0.0
    words = {w for p in parts for _, ws, _ in p.qterms for w in ws}
    vanished = [w for w in dict.fromkeys(_WORD.findall(query.casefold())) if w not in words]
    in_no_note = [t for p in parts[:1] for t, _, tid in p.qterms if tid is None]
    not_in_chunk = [r.term for r in rows[best] if r.in_index and r.f == 0 and r.analyzer == parts[0].config.name]
    missing = [f"{w} (dropped by the analyzer)" for w in vanished]
    missing += [f"{t} (in no note)" for t in in_no_note] + [f"{t} (not in this chunk)" for t in not_in_chunk]
    return WhyNot(
        lib.note_paths[note],
        chunk,
        rank,
        bm25_rank,
        dense_rank,
        score,
        rows[best],
        top.explain if top is not None else [],
        top.chunk_id if top is not None else None,
        missing,
        kth - score,
        k,
        vanished,
    )
