""" "Why not this note?": where the note a person expected ranks for a query, and why not higher.

Elasticsearch's _explain answers this for one document; here it is the note's best chunk, its rank
by keywords, by meaning (when meaning search ran) and in the list the mode shows, each beside the top
hit's and the k-th's; each query term's n_t, idf, f and contribution beside the top hit's; the query
words that vanished in analysis or occur in no note; and how far it is from the k-th result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from .dense import Embedder
from .errors import NotIndexed  # noqa: F401 (re-exported)
from .explain import TermRow, ordinal
from .fusion import FUSION_DEPTH, FUSIONS, Fusion
from .modes import Mode
from .params import SearchParams
from .paths import shown
from .query import Query, as_query
from .query_mask import why_left_out
from .search import explain_rows

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Ranks:
    """Where one chunk stands: by keywords (BM25), by meaning (cosine) and in the list the mode shows."""

    keyword: int | None  # None: no query term in it
    meaning: int | None  # None: no meaning search ran, or the chunk is not embedded yet
    shown: int | None  # None: beyond the list searched (`WhyNot.depth`)

    def to_json(self) -> dict[str, int | None]:
        return {"keyword": self.keyword, "meaning": self.meaning, "shown": self.shown}


@dataclass
class WhyNot:
    path: str
    chunk_id: int  # the note's best chunk for the query (in the mode that ran)
    rank: int | None  # in the mode that ran (None: not among the ranked)
    bm25_rank: int | None  # None: no query term in the note
    dense_rank: int | None  # None: no meaning search, or not embedded yet
    score: float  # BM25 score of that chunk
    terms: list[TermRow]
    top_terms: list[TermRow]  # the top hit's rows, side by side
    top_chunk_id: int | None
    missing_terms: list[str]  # query words that vanished in analysis, terms in no note, terms not in the chunk
    gap_to_k: float  # the k-th result's score minus this chunk's, in the mode that ran (<= 0: within the top k)
    k: int = 10
    vanished: list[str] = field(default_factory=list)
    mode: Mode = Mode.BM25
    top: Ranks | None = None  # the top hit's ranks
    kth: Ranks | None = None  # the k-th hit's ranks (None: fewer than k results)
    depth: int = 10  # how far the list was searched
    left_out_by: list[str] = field(default_factory=list)  # the query's filters or exclusions that leave it out

    def __post_init__(self) -> None:
        self.mode = Mode(self.mode)  # "hybrid" taken as Mode.HYBRID

    @property
    def ranks(self) -> Ranks:
        return Ranks(self.bm25_rank, self.dense_rank, self.rank)

    def summary(self) -> str:
        """The answer in words: the note's place by keywords and by meaning, its place in the list the
        mode shows, and how far that is from the k-th ("3 places below the 10th")."""
        if self.left_out_by:
            return "The query leaves it out: " + "; ".join(self.left_out_by) + "."
        fused = self.mode.uses_meaning
        by_keywords = f"{ordinal(self.bm25_rank)} by keywords" if self.bm25_rank else "no query word is in it"
        if not fused:
            if not self.bm25_rank:
                return "No query word is in it, so keywords do not rank it."
            gap = "within" if self.gap_to_k <= 0 else f"{self.gap_to_k:.3f} below"
            return f"Its best chunk is {by_keywords} (BM25 {self.score:.3f}, {gap} the {ordinal(self.k)}'s score)."
        by_meaning = f"{ordinal(self.dense_rank)} by meaning" if self.dense_rank else "not embedded yet"
        if not self.rank:
            place = f"beyond the first {self.depth}"
        elif self.rank <= self.k:
            place = f"{ordinal(self.rank)}, within the top {self.k}"
        else:
            gap = self.rank - self.k
            place = f"{ordinal(self.rank)}, {gap} place{'s' if gap != 1 else ''} below the {ordinal(self.k)}"
        return f"Its best chunk is {by_keywords} and {by_meaning}; {self.mode} puts its note {place}."

    def rank_table(self) -> tuple[list[str], list[tuple[str, list[str]]]]:
        """Column names and rows of the note's ranks beside the top hit's and the k-th's: by keywords,
        by meaning (when meaning search ran) and in the list the mode shows; "—" where there is no hit."""
        columns = [("This note", self.ranks), ("Top hit", self.top), (f"The {ordinal(self.k)}", self.kth)]
        kinds = [("By keywords", "keyword", "no match"), ("By meaning", "meaning", "not embedded")]
        kinds = (kinds if self.mode.uses_meaning else kinds[:1]) + [(f"In the {self.mode} list", "shown", "beyond")]
        rows = [
            (label, [("—" if r is None else ordinal(v) if (v := getattr(r, attr)) else none) for _, r in columns])
            for label, attr, none in kinds
        ]
        return [name for name, _ in columns], rows

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
            "mode": self.mode,
            "summary": self.summary(),
            "ranks": self.ranks.to_json(),
            "top_ranks": self.top.to_json() if self.top else None,
            "kth_ranks": self.kth.to_json() if self.kth else None,
            "left_out_by": self.left_out_by,
        }


def _meaning_ranks(
    lib: Any, query: str, embedder: Embedder | None, partial: bool, mask: Any = None
) -> dict[int, int]:
    """Every embedded chunk's rank by cosine with the query (exact: the whole index, best first; only
    the chunks the query's filters keep when `mask` is given)."""
    if embedder is None or not query.strip():
        return {}
    nearest = lib.nearest(embedder.name, partial)  # computed by the search before it
    vector = embedder.embed_query(query)
    ids, _ = nearest.top_k(vector, lib.n_chunks) if mask is None else nearest.top_k_within(vector, lib.n_chunks, mask)
    return {int(doc): i + 1 for i, doc in enumerate(ids.tolist())}


def why_not(
    lib: Any,
    query: str | Query,
    path: str,
    params: SearchParams | None = None,
    embedder: Embedder | None = None,
    partial: bool = False,
) -> WhyNot:
    """Explain where note `path` (relative to the folder) ranks for `query` and why not higher
    (higher than the top `params.k`, in `params.mode`; `partial`: as IndexReader.search): its best
    chunk's rank by keywords, by meaning and in the list the mode shows, beside the top hit's and the
    k-th's, and its BM25 rows beside the top hit's."""
    params = params or SearchParams()
    config, k1, b, k, mode = params.analyzer, params.k1, params.b, params.k, params.mode
    note = lib.note_index(path)
    if note is None:
        skipped = next((s for s in lib.skipped if s.path == path and not s.loaded), None)
        why = f"it was skipped: {skipped.reason}" if skipped else "no such note in the index"
        raise NotIndexed(f"{path} is not indexed ({why})")
    q = as_query(query)
    text = q.text
    parts = lib.searcher.prepare(text, config)
    chunks = list(lib.chunks_of_note(note))
    if not chunks:
        raise NotIndexed(f"{path} is not indexed (it has no text to search)")
    rows = explain_rows(parts, chunks, k1, b)
    scores = [sum(r.contribution for r in rs) for rs in rows]
    depth = max(k, FUSION_DEPTH) if mode.uses_meaning else k
    result = lib.search(q, replace(params, k=depth), embedder=embedder, partial=partial)
    mask = lib.searcher.mask(q, config)
    meaning = _meaning_ranks(lib, text, embedder, partial, mask) if mode.uses_meaning else {}
    wanted = chunks + [h.chunk_id for h in result.hits[:1] + result.hits[k - 1 : k]]
    keyword = lib.searcher.ranks_of(q, wanted, config, k1, b)  # the query scored once, not once per chunk

    listed = next((h for h in result.hits if h.path == lib.note_paths[note]), None)  # the note's place
    if listed is not None and mode.uses_meaning:
        best = chunks.index(listed.chunk_id)  # the chunk that places the note in the list shown
    elif mode.uses_meaning and meaning:  # beyond the list: the chunk the fusion would like best
        fusion = FUSIONS[params.fusion]  # its own score (the dense weight too; the note's share is
        # the same for every chunk of the note, so it cannot change which is best)

        def fused(i: int) -> float:
            kr, mr = (keyword[chunks[i]] if scores[i] > 0 else None), meaning.get(chunks[i])
            return Fusion(kr, None, mr, None, fusion.c, fusion.dense_weight).score

        best = max(range(len(chunks)), key=lambda i: (fused(i), -i))
    else:
        best = max(range(len(chunks)), key=lambda i: (scores[i], -i))
    chunk, score = chunks[best], scores[best]
    bm25_rank = keyword[chunk] if score > 0 else None
    rank = (listed.rank if listed is not None else None) if mode.uses_meaning else bm25_rank

    def ranks_of(hit: Any) -> Ranks:
        return Ranks(keyword[hit.chunk_id], meaning.get(hit.chunk_id), hit.rank)

    top = result.hits[0] if result.hits else None
    kth = result.hits[k - 1] if len(result.hits) >= k else None
    if not mode.uses_meaning:
        bm25_of = [sum(r.contribution for r in h.explain) for h in result.hits[:k]]
        gap = (sorted(bm25_of, reverse=True)[k - 1] if len(bm25_of) >= k else 0.0) - score
    else:
        gap = (kth.score if kth is not None else 0.0) - (listed.score if listed is not None else 0.0)
    words = {w for p in parts for _, ws, _ in p.qterms for w in ws}
    vanished = [w for w in dict.fromkeys(_WORD.findall(text.casefold())) if w not in words]
    in_no_note = [t for p in parts[:1] for t, _, tid in p.qterms if tid is None]
    not_in_chunk = [r.term for r in rows[best] if r.in_index and r.f == 0 and r.analyzer == parts[0].config.name]
    left_out = lib.analyzer(parts[0].config).query_filter(text).dropped  # stop words, elided articles
    missing = [f"{w} ({left_out.get(w, 'dropped by the analyzer')})" for w in vanished]
    missing += [f"{t} (in no note)" for t in in_no_note] + [f"{t} (not in this chunk)" for t in not_in_chunk]
    return WhyNot(
        lib.note_paths[note],
        chunk,
        rank,
        bm25_rank,
        meaning.get(chunk),
        score,
        rows[best],
        top.explain if top is not None else [],
        top.chunk_id if top is not None else None,
        missing,
        gap,
        k,
        vanished,
        mode,
        ranks_of(top) if top is not None else None,
        ranks_of(kth) if kth is not None else None,
        depth,
        _left_out_by(lib, q, config, note, chunks, mask),
    )


def _left_out_by(lib: Any, q: Query, config: Any, note: int, chunks: list[int], mask: Any) -> list[str]:
    """The query's filters, phrases or exclusions that leave every chunk of the note out."""
    if mask is None or mask[chunks].any():
        return []
    return why_left_out(q, lib.note_facts(), lib.searcher.lookups(config), note)
