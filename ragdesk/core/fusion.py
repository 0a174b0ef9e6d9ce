"""How hybrid search fuses its two rankings (BM25 and dense) by reciprocal rank, with the whole
note's share and the half share of chunks not embedded yet; the fusion settings and their defaults."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .explain import ordinal

TUNED_C, TUNED_DENSE_WEIGHT = 10, 1.0


# A third share for the chunk's note as a whole: its chunks' summed vectors against the query,
# ranked among the fused notes (eight sets, note level: 0.817 / 0.699 -> 0.825 / 0.710 Hit@5 / MRR,
# no set lower; 0.5 gave 0.809 / 0.712; README, "Meaning search").
TUNED_NOTE_WEIGHT = 0.25


RRF_C = 60  # the plain RRF of the literature (Cormack et al. 2009), one click away as --fusion plain


FUSION_DEPTH = 100  # how many results of each engine take part in the fusion


@dataclass(frozen=True)
class FusionConfig:
    """How hybrid search fuses its two rankings, and whether dense and hybrid results are grouped by
    note (a note ranks by its best chunk; its other chunks in the list are folded beneath it)."""

    c: int
    dense_weight: float
    group_notes: bool
    note_weight: float = 0.0  # 0: no note share


# Chosen on the eight question sets (tests/benchmarks/tune_fusion.py; README, "Meaning search").
FUSIONS = {
    "tuned": FusionConfig(c=TUNED_C, dense_weight=TUNED_DENSE_WEIGHT, group_notes=True, note_weight=TUNED_NOTE_WEIGHT),
    "plain": FusionConfig(c=RRF_C, dense_weight=1.0, group_notes=False),
}


DEFAULT_FUSION = "tuned"


# Hybrid over an unfinished meaning index embeds BM25's top chunks not embedded yet for the search
# (core.search): without them, embedded chunks buried the others' notes and hybrid lost to BM25 at
# every share; with them it beats BM25 from 1% embedded (eight sets: README, "While it is computed").
QUERY_TIME_EMBED = 10


# While the meaning index is unfinished, a chunk not embedded yet has no dense rank; counting nothing
# for it buried every such note under the embedded ones (eight sets, 10% embedded: Hit@5 / MRR 0.71 /
# 0.33 for questions whose note was not embedded, BM25 0.79 / 0.68), counting its BM25 rank twice
# gave the embedded ones nothing over BM25; half of that share keeps both near (README, Meaning search).
PENDING_SHARE = 0.5


@dataclass(frozen=True)
class Fusion:
    """How a fused rank came about: each engine's rank (None if it did not list the chunk) and share.
    `dense_pending`: the chunk is not embedded yet (an unfinished meaning index): its dense share is
    PENDING_SHARE of what its BM25 rank gives. `note_rank`: the rank of the chunk's note among the
    fused notes by `note_cosine` (its embedded chunks' summed vector against the query), giving
    note_weight/(c + note_rank)."""

    bm25_rank: int | None
    bm25_score: float | None
    dense_rank: int | None
    cosine: float | None
    c: int = RRF_C
    dense_weight: float = 1.0
    dense_pending: bool = False
    note_rank: int | None = None
    note_cosine: float | None = None
    note_weight: float = 0.0

    @property
    def bm25_share(self) -> float:
        return 1.0 / (self.c + self.bm25_rank) if self.bm25_rank else 0.0

    @property
    def dense_share(self) -> float:
        if self.dense_pending:
            return PENDING_SHARE * self.dense_weight / (self.c + self.bm25_rank) if self.bm25_rank else 0.0
        return self.dense_weight / (self.c + self.dense_rank) if self.dense_rank else 0.0

    @property
    def note_share(self) -> float:
        return self.note_weight / (self.c + self.note_rank) if self.note_rank and self.note_weight else 0.0

    @cached_property  # read several times a hit while fusing and sorting; a Fusion never changes
    def score(self) -> float:
        return self.bm25_share + self.dense_share + self.note_share

    def to_json(self) -> dict[str, object]:
        return {
            "bm25_rank": self.bm25_rank,
            "bm25_score": self.bm25_score,
            "dense_rank": self.dense_rank,
            "cosine": self.cosine,
            "rrf_bm25": self.bm25_share,
            "rrf_dense": self.dense_share,
            "rrf": self.score,
            "rrf_c": self.c,
            "dense_weight": self.dense_weight,
            "dense_pending": self.dense_pending,
            "note_rank": self.note_rank,
            "note_cosine": self.note_cosine,
            "rrf_note": self.note_share,
            "note_weight": self.note_weight,
        }

    def in_words(self, mode: str = "hybrid") -> str:
        """The rank for a person, before the formula: each engine's rank and, fused, where the score
        came from ("Keyword rank 6, meaning rank 2, its note 1st as a whole; the score is 50% meaning, …")."""
        said = [f"keyword rank {self.bm25_rank}" if self.bm25_rank else "no keyword match"]
        if self.dense_rank:
            said.append(f"meaning rank {self.dense_rank}")
        elif self.dense_pending:
            said.append("not embedded yet (its keyword rank stands in)")
        else:
            said.append("not among the closest by meaning")
        if self.note_rank and self.note_weight:
            said.append(f"its note {ordinal(self.note_rank)} as a whole")
        if mode == "dense":  # ranked by cosine alone: the keyword rank is for comparison
            said = [said[1], said[0] + " (not used)"]
        text = ", ".join(said)
        text = text[0].upper() + text[1:]
        shares = (("meaning", self.dense_share), ("keywords", self.bm25_share), ("whole note", self.note_share))
        if mode == "dense" or not self.score:
            return text + "."
        parts = sorted(((v / self.score, name) for name, v in shares if v), reverse=True)
        return text + "; the score is " + ", ".join(f"{share:.0%} {name}" for share, name in parts) + "."

    def describe(self) -> str:
        parts = []
        if self.bm25_rank:
            parts.append(
                f"BM25 #{self.bm25_rank} (score {self.bm25_score:.3f}) → 1/({self.c}+{self.bm25_rank})"
                f" = {self.bm25_share:.4f}"
            )
        else:
            parts.append("BM25: not in its top list → 0")
        if self.dense_rank:
            weight = f"{self.dense_weight:g}" if self.dense_weight != 1 else "1"
            parts.append(
                f"dense #{self.dense_rank} (cosine {self.cosine:.3f}) → {weight}/({self.c}+{self.dense_rank})"
                f" = {self.dense_share:.4f}"
            )
        elif self.dense_pending and self.bm25_rank:
            weight = f"{self.dense_weight:g} × " if self.dense_weight != 1 else ""
            parts.append(
                f"dense: not embedded yet → {weight}{PENDING_SHARE:g}/({self.c}+{self.bm25_rank}) (its BM25 rank)"
                f" = {self.dense_share:.4f}"
            )
        else:
            parts.append("dense: not in its top list → 0")
        if self.note_rank and self.note_weight:
            parts.append(
                f"whole note #{self.note_rank} (cosine {self.note_cosine:.3f}) → {self.note_weight:g}/"
                f"({self.c}+{self.note_rank}) = {self.note_share:.4f}"
            )
        return " + ".join(parts) + f" = {self.score:.4f}"


def rrf_fuse(
    bm25: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    k: int,
    c: int = RRF_C,
    dense_weight: float = 1.0,
    pending: np.ndarray | None = None,
) -> list[tuple[int, Fusion]]:
    """Reciprocal rank fusion of two ranked lists of (chunk id, score):
    RRF(d) = 1/(c + BM25 rank) + w/(c + dense rank), a list that does not hold d adding nothing;
    `pending` (by chunk id: not embedded yet) gives such a chunk PENDING_SHARE x w/(c + BM25 rank).

    Ties are broken by chunk id, so the fused ranking is reproducible.
    """
    b_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(bm25)}
    d_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(dense)}
    fused = []
    for doc in b_rank.keys() | d_rank.keys():
        br, bs = b_rank.get(doc, (None, None))
        dr, ds = d_rank.get(doc, (None, None))
        waiting = pending is not None and dr is None and bool(pending[doc])
        fused.append((doc, Fusion(br, bs, dr, ds, c, dense_weight, waiting)))
    fused.sort(key=lambda x: (-x[1].score, x[0]))
    return fused[:k]


def with_note_ranks(
    fused: list[tuple[int, Fusion]], note_of: np.ndarray, cosines: dict[int, float | None], weight: float
) -> list[tuple[int, Fusion]]:
    """`fused` with each chunk's note share: the fused notes ranked by `cosines` (by note; ties by
    note id; None: not embedded, no share), each chunk given weight/(c + its note's rank); sorted
    again by score, ties by chunk id."""
    order = sorted((n for n, cos in cosines.items() if cos is not None), key=lambda n: (-cosines[n], n))
    rank = {n: i + 1 for i, n in enumerate(order)}
    out = []
    for doc, f in fused:  # Fusion(...) rather than dataclasses.replace: 5x faster, 200 a query
        note = int(note_of[doc])
        g = Fusion(
            f.bm25_rank, f.bm25_score, f.dense_rank, f.cosine, f.c, f.dense_weight, f.dense_pending,
            rank.get(note), cosines.get(note), weight,
        )  # fmt: skip
        out.append((g.score, doc, g))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [(doc, g) for _, doc, g in out]
