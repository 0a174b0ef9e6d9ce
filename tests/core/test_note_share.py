"""The tuned fusion's note share: a chunk's note as a whole (its chunks' summed vectors) against the
query, ranked among the fused notes and added as weight/(c + note rank)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragdesk.core import build as build_mod
from ragdesk.core.build import build_index
from ragdesk.core.fusion import FUSIONS, TUNED_NOTE_WEIGHT, rrf_fuse, with_note_ranks
from ragdesk.core.meaning_writer import meaning_matrix
from ragdesk.core.nearest import NearestRows, SegmentedNearest

from ..conftest import write_notes
from .test_dense import HashEmbedder


def test_the_note_share_lifts_the_chunk_of_the_note_nearer_the_query() -> None:
    """Chunks 0 (note 0) and 4 (note 2) tie at 1/11; note 2 is nearer the query than note 0 as a
    whole, so chunk 4 goes first; chunk 2's note is nearest, but its fused rank is lower."""
    fused = rrf_fuse([(0, 5.0)], [(4, 0.95), (2, 0.9)], k=10, c=10)
    assert [doc for doc, _ in fused] == [0, 4, 2]
    note_of = np.array([0, 0, 1, 1, 2])
    out = with_note_ranks(fused, note_of, {0: 0.1, 1: 0.9, 2: 0.5}, 0.25)
    assert [doc for doc, _ in out] == [4, 0, 2]
    by = dict(out)
    assert [by[d].note_rank for d in (0, 2, 4)] == [3, 1, 2]
    assert by[4].score == 1 / 11 + 0.25 / 12 and by[0].score == 1 / 11 + 0.25 / 13
    assert by[2].note_share == 0.25 / 11 and by[2].note_cosine == 0.9
    assert by[4].describe() == (
        "BM25: not in its top list → 0 + dense #1 (cosine 0.950) → 1/(10+1) = 0.0909"
        " + whole note #2 (cosine 0.500) → 0.25/(10+2) = 0.0208 = 0.1117"
    )
    assert by[4].to_json()["rrf_note"] == 0.25 / 12 and by[4].to_json()["note_rank"] == 2


def test_a_note_with_nothing_embedded_gets_no_note_share() -> None:
    fused = with_note_ranks(rrf_fuse([(0, 1.0), (1, 0.5)], [], k=5, c=10), np.array([0, 1]), {0: None, 1: 0.3}, 0.25)
    by = dict(fused)
    assert by[0].note_rank is None and by[0].note_share == 0.0 and "whole note #" not in by[0].describe()
    assert by[1].note_rank == 1 and [doc for doc, _ in fused] == [1, 0]  # 1/12 + 0.25/11 > 1/11


def test_summed_cosines_across_segments_count_only_what_is_embedded() -> None:
    """Two segments, the base's chunk 1 replaced (merged ids: base 0, 2 -> 0, 1; delta 0, 1 -> 2, 3);
    the delta's second row not written yet: its zeros add nothing."""
    base = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float16)
    delta = np.array([[0.6, 0.8, 0], [0, 0, 0]], np.float16)
    nearest = SegmentedNearest(
        [NearestRows(base), NearestRows(delta, np.array([True, False]))],
        (np.array([0, -1, 1]), np.array([2, 3])),
    )
    q = np.array([0.0, 1.0, 0.0])
    got = nearest.summed_cosines(q, [(0, 2), (2, 4), (3, 4)])
    assert got[0] == pytest.approx(0.0) and got[1] == pytest.approx(0.8, abs=1e-3) and got[2] is None
    empty = SegmentedNearest([NearestRows(np.zeros((2, 0), np.float16))], (np.array([0, 1]),))
    assert empty.summed_cosines(q, [(0, 2)]) == [None]


def test_summed_cosines_are_the_summed_vectors_cosines_query_after_query() -> None:
    """The note lengths kept from one query serve the next exactly; an unfinished index keeps none
    (a row written since counts at once)."""
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((40, 16)).astype(np.float16)
    ranges = [(0, 5), (5, 6), (6, 40), (2, 9)]
    nearest = SegmentedNearest([NearestRows(rows)], (np.arange(40),))
    for _ in range(3):
        q = rng.standard_normal(16)
        q /= np.linalg.norm(q)
        expected = []
        for first, end in ranges:
            total = rows[first:end].astype(np.float64).sum(axis=0)
            expected.append(float(total @ q / np.linalg.norm(total)))
        assert nearest.summed_cosines(q, ranges) == pytest.approx(expected, abs=1e-12)
    growing = np.zeros((3, 2), np.float16)
    growing[0] = [1, 0]
    unfinished = SegmentedNearest([NearestRows(growing, np.array([True, False, False]))], (np.arange(3),))
    assert unfinished.summed_cosines(np.array([0.0, 1.0]), [(0, 2)]) == [pytest.approx(0.0)]
    growing[1] = [0, 1]
    assert unfinished.summed_cosines(np.array([0.0, 1.0]), [(0, 2)]) == [pytest.approx(2**-0.5)]


@pytest.mark.parametrize("delta", [False, True], ids=["one-segment", "delta-segment"])
def test_hybrid_search_gives_each_hit_its_notes_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta: bool
) -> None:
    """Every hit's note cosine is its note's summed chunk vectors against the query, its note rank
    that cosine's place among the listed notes, and its score the three shares' sum."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0 if delta else 0.0)
    para = " ".join(f"word{i}" for i in range(70))
    notes = {
        "a.md": f"# Dogs\n\ndogs bark loudly\n\n{para} dogs\n\n{para} walk",
        "b.md": f"# Cats\n\ncats sleep\n\n{para} bark",
        "c.md": "# Birds\n\nbirds sing dogs",
    }
    folder = write_notes(tmp_path / "n", notes)
    emb = HashEmbedder()
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    meaning_matrix(lib, emb)
    if delta:
        (folder / "c.md").write_text("# Birds\n\nbirds sing dogs bark at dawn", encoding="utf-8")
        lib, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
        meaning_matrix(lib, emb)
        assert len(lib.segments) == 2
    result = lib.search("dogs bark", mode="hybrid", embedder=emb, k=50, group=False)
    rows = np.asarray(lib.stored_meaning(emb.name), np.float64)
    q = np.asarray(emb.embed_query("dogs bark"), np.float64)
    expected = {}
    for note in {int(lib.chunk_note[h.chunk_id]) for h in result.hits}:
        total = rows[lib.note_first_chunk[note] : lib.note_first_chunk[note + 1]].sum(axis=0)
        expected[note] = float(total @ q / np.linalg.norm(total))
    order = sorted(expected, key=lambda n: (-expected[n], n))
    c = FUSIONS["tuned"].c
    assert len({int(lib.chunk_note[h.chunk_id]) for h in result.hits}) == 3
    for h in result.hits:
        f, note = h.fusion, int(lib.chunk_note[h.chunk_id])
        assert f is not None and f.note_cosine == pytest.approx(expected[note], abs=1e-12)
        assert f.note_rank == order.index(note) + 1
        assert h.score == f.bm25_share + f.dense_share + TUNED_NOTE_WEIGHT / (c + f.note_rank)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    plain = lib.search("dogs bark", mode="hybrid", embedder=emb, k=50, fusion="plain")
    assert all(h.fusion.note_rank is None and h.fusion.note_share == 0 for h in plain.hits)
