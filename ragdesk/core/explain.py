"""Per-term BM25 explanations: every number that went into a chunk's score, and the query's terms
per analyzer they are computed from (QueryPart)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .analyzers import AnalyzerConfig
from .bm25 import contribution, idf, term_score
from .postings import MergedTermIndex, TermIndex
from .topk import QueryTermRef


@dataclass(slots=True)
class TermRow:
    """One query term's part of one chunk's score, with the formula filled in.

    Not frozen: a search builds hundreds of these (terms x hits), and a frozen dataclass's
    __init__ costs several times more; nothing mutates them.
    """

    term: str
    words: tuple[str, ...]
    n_t: int
    idf: float
    f: int
    doc_len: int
    avgdl: float
    k1: float
    b: float
    contribution: float
    analyzer: str = ""  # which index the term comes from (matters for combined analyzers)
    weight: float = 1.0  # the analyzer's weight in a combined score

    @property
    def in_index(self) -> bool:
        return self.n_t > 0

    @property
    def formula(self) -> str:
        if not self.in_index:
            return f"“{self.term}” is not in the index: contributes 0"
        if self.f == 0:
            return f"“{self.term}” does not occur in this chunk (f = 0): contributes 0"
        ratio = 1.0 - self.b + self.b * self.doc_len / self.avgdl if self.avgdl else 1.0
        core = f"{self.idf:.3f} · {self.f} · {self.k1 + 1:g} / ({self.f} + {self.k1:g} · {ratio:.4f})"
        if self.weight != 1.0:
            core = f"{self.weight:g} × {core}"
        return f"{core} = {self.contribution:.3f}"

    @property
    def label(self) -> str:
        """The term with its analyzer when that is not obvious (e.g. "ind (trigrams ×0.3)")."""
        return f"{self.term} ({self.analyzer} ×{self.weight:g})" if self.weight != 1.0 else self.term

    def to_json(self) -> dict[str, object]:
        """Every field, then `in_index` and `formula`. Written out: `dataclasses.asdict` deep-copies
        each value and made serialising a result's ~130 rows 10x slower than the search itself."""
        return {
            "term": self.term,
            "words": list(self.words),
            "n_t": self.n_t,
            "idf": self.idf,
            "f": self.f,
            "doc_len": self.doc_len,
            "avgdl": self.avgdl,
            "k1": self.k1,
            "b": self.b,
            "contribution": self.contribution,
            "analyzer": self.analyzer,
            "weight": self.weight,
            "in_index": self.in_index,
            "formula": self.formula,
        }


def term_rows(
    term: str,
    words: tuple[str, ...],
    n_docs: int,
    n_t: int,
    fs: Sequence[int],
    doc_lens: Sequence[int],
    avgdl: float,
    k1: float,
    b: float,
    analyzer: str = "",
    weight: float = 1.0,
) -> list[TermRow]:
    """One term's rows for several chunks (their f and |D|), one scalar formula call each: the
    reference that search.explain_rows, which computes a whole query's rows as arrays, must match."""
    idf_t = idf(n_docs, n_t) if n_t > 0 else 0.0
    return [
        TermRow(
            term,
            words,
            n_t,
            idf_t,
            f,
            dl,
            avgdl,
            k1,
            b,
            weight * contribution(idf_t, f, dl, avgdl, k1, b) if n_t > 0 and f > 0 else 0.0,
            analyzer,
            weight,
        )
        for f, dl in zip(fs, doc_lens)
    ]


def explanation_text(rows: list[TermRow], score: float, header: str = "") -> str:
    """The breakdown as plain text (for "Copy explanation" and the CLI)."""
    lines = [header] if header else []
    if rows:
        r0 = rows[0]
        lines.append(f"|D| = {r0.doc_len}, avgdl = {r0.avgdl:.2f}, k1 = {r0.k1:g}, b = {r0.b:g}")
    lines.append(f"{'term':<16} {'n_t':>7} {'idf':>7} {'f':>4} {'contribution':>12}  share")
    for r in rows:
        share = r.contribution / score if score else 0.0
        note = "" if r.in_index else "  (not in index)"
        lines.append(f"{r.label:<16} {r.n_t:>7} {r.idf:>7.3f} {r.f:>4} {r.contribution:>12.3f}  {share:>5.1%}{note}")
    lines.append(f"{'score':<16} {'':>7} {'':>7} {'':>4} {score:>12.3f}")
    for r in rows:
        if r.in_index and r.f:
            lines.append(f"{r.label}: {r.formula}")
    return "\n".join(lines)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, … 11th, 12th, 13th, … 21st: ranks said in words."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass
class QueryPart:
    """One single-index analyzer taking part in a query, with the query's terms in its index."""

    config: AnalyzerConfig
    weight: float
    index: TermIndex | MergedTermIndex
    qterms: list[tuple[str, tuple[str, ...], int | None]]  # term, query words, id (None: not in the notes)
    dfs: list[int]  # n_t per query term (0: not in the notes)

    @property
    def present(self) -> list[int]:
        return [tid for _, _, tid in self.qterms if tid is not None]


def query_refs(parts: list[QueryPart]) -> list[QueryTermRef]:
    return [QueryTermRef(p.index, tid, p.weight) for p in parts for tid in p.present]


def explain_rows(parts: list[QueryPart], docs: Sequence[int], k1: float, b: float) -> list[list[TermRow]]:
    """The explanation rows of each of `docs`: per analyzer, all term frequencies looked up in one pass
    and every contribution computed as one array by `bm25.term_score`, the ranking's own formula, so
    the same floats as the ranking."""
    out: list[list[TermRow]] = [[] for _ in docs]
    where = np.asarray(docs, dtype=np.int64)
    for p in parts:
        ti, cfg_name, weight = p.index, p.config.name, p.weight
        n, avgdl = ti.n_docs, ti.avgdl
        lengths = np.asarray(ti.doc_len)[where].tolist()
        norms = ti.norms(k1, b)[where]
        present = p.present
        freqs = ti.frequencies(present, where) if present else np.zeros((0, len(docs)), np.int64)
        idfs = np.array([idf(n, n_t) for n_t in p.dfs if n_t > 0], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):  # f = 0 (and k1 = 0): 0 below
            contribs = weight * term_score(idfs[:, None], freqs, norms, k1)
        shares = np.where(freqs > 0, contribs, 0.0).tolist()
        fs_rows = freqs.tolist()
        zeros, nothing = [0] * len(docs), [0.0] * len(docs)
        row_of = 0
        for (term, words, tid), n_t in zip(p.qterms, p.dfs):
            if tid is None:
                fs, cs, idf_t = zeros, nothing, 0.0
            else:
                fs, cs, idf_t = fs_rows[row_of], shares[row_of], float(idfs[row_of])
                row_of += 1
            for rows, f, dl, c in zip(out, fs, lengths, cs):
                rows.append(TermRow(term, words, n_t, idf_t, f, dl, avgdl, k1, b, c, cfg_name, weight))
    return out
