"""What a search returns: ranked hits, each with what is needed to show, cite and explain it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from .explain import TermRow
from .fusion import Fusion
from .languages import QueryFilter
from .modes import Mode
from .paths import shown
from .query import Query, parse
from .secrets import find_secrets, mask


@dataclass
class Hit:
    """One ranked chunk with everything needed to show and explain it."""

    rank: int
    score: float
    chunk_id: int
    path: str
    heading: str
    start_line: int
    end_line: int
    length: int
    text: str
    explain: list[TermRow]
    fusion: Fusion | None = None  # dense and hybrid modes: how the rank came about
    span: tuple[int, int] = (0, 0)  # character span in the note's text
    page: int | None = None  # 1-based page of a PDF's chunk (where it starts); None for other notes
    folded: tuple[int, ...] = ()  # grouped by note: the note's other chunks in the ranking, best first
    context: str = ""  # what of its note before it decides its secrets (secret_layout.note_context)
    note_date: float = 0.0  # its note's date, epoch seconds: front matter's date or created, else modified

    @property
    def date_text(self) -> str:
        """The note's date as a person reads it (YYYY-MM-DD, local time); "" when unknown."""
        return time.strftime("%Y-%m-%d", time.localtime(self.note_date)) if self.note_date > 0 else ""

    @property
    def key(self) -> tuple[str, int, int]:
        """Which passage this is, across refreshes (chunk ids are only valid within one index)."""
        return (self.path, *self.span)

    @property
    def location(self) -> str:
        """Where in the note, as a person cites it: a PDF's page, else the lines."""
        return f"p. {self.page}" if self.page is not None else f"lines {self.start_line}–{self.end_line}"

    @property
    def shown_path(self) -> str:
        """`path` as a person sees it (see paths.shown); `path` itself opens the file."""
        return shown(self.path)

    def masked(self) -> Hit | None:
        """This hit as the window shows it until the person reveals it: each secret in its text, file
        name and heading trail as • (same lengths, so highlights still fit); None when it holds none."""
        found = [
            find_secrets(self.text, context=self.context),
            find_secrets(self.path, name=True),
            find_secrets(self.heading, name=True),
        ]
        if not any(found):
            return None
        text, path, heading = (mask(s, f) for s, f in zip((self.text, self.path, self.heading), found))
        return replace(self, text=text, path=path, heading=heading)

    def to_json(self, with_explain: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "rank": self.rank,
            "score": self.score,
            "path": self.shown_path,
            "chunk_id": self.chunk_id,
            "heading": shown(self.heading),
            "page": self.page,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "length": self.length,
            "text": self.text,
            "folded_chunk_ids": list(self.folded),
            "date": self.date_text,
        }
        if with_explain:
            d["explain"] = [r.to_json() for r in self.explain]
        if self.fusion is not None:
            d["fusion"] = self.fusion.to_json()
        return d


@dataclass
class QueryTerm:
    term: str
    words: tuple[str, ...]
    n_t: int


@dataclass
class SearchResult:
    """A ranking plus its context (statistics, timing, and why it may be empty or partial)."""

    query: str
    analyzer: str
    k1: float
    b: float
    n_docs: int
    avgdl: float
    took_ms: float
    hits: list[Hit]
    terms: list[QueryTerm]
    reason: str | None = None
    mode: Mode = Mode.BM25
    mode_reason: str = ""  # why this mode ran (auto: hybrid once the meaning index is complete)
    grouped: bool = False  # each note once, at its best chunk; its other chunks in `Hit.folded`
    left_out: QueryFilter = field(default_factory=QueryFilter)  # query words not searched for, and why
    parsed: Query | None = None  # the query as parsed (core.query); None for a result built by hand
    listed: bool = False  # a query of filters only: matching notes newest first, unranked
    sort: str = "relevance"  # or "newest" (params.SORTS): the matches by their notes' dates

    def __post_init__(self) -> None:
        self.mode = Mode(self.mode)  # "hybrid" taken as Mode.HYBRID

    def to_json(self, with_explain: bool = True) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "mode_reason": self.mode_reason,
            "grouped": self.grouped,
            "analyzer": self.analyzer,
            "k1": self.k1,
            "b": self.b,
            "N": self.n_docs,
            "avgdl": self.avgdl,
            "took_ms": self.took_ms,
            "reason": self.reason,
            "terms": [{"term": t.term, "words": list(t.words), "n_t": t.n_t} for t in self.terms],
            "query_language": self.left_out.language,
            "dropped": self.left_out.to_json()["dropped"],
            "parsed": (self.parsed or parse(self.query)).to_json(),
            "listed": self.listed,
            "sort": self.sort,
            "hits": [h.to_json(with_explain) for h in self.hits],
        }
