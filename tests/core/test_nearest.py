"""Exact top k over quantized meaning-index rows: the exhaustive ranking's ids and cosines."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from ragdesk.core import kernels
from ragdesk.core.meaning_writer import embed_missing, meaning_matrix
from ragdesk.core.nearest import NearestRows, exact_cosines, exhaustive_top_k, quantize


def clustered(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Unit rows around a few centres (near-ties, exact duplicates and a zero row among them), as
    embeddings of notes on a few subjects are."""
    centres = rng.standard_normal((5, dim))
    rows = centres[rng.integers(5, size=n)] + rng.standard_normal((n, dim)) * rng.choice([0.02, 0.3], size=(n, 1))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    rows[rng.integers(n, size=n // 10)] = rows[0]  # duplicates: equal cosines, ranked by id
    rows[-1] = 0.0
    return rows.astype(np.float16)


@pytest.mark.parametrize("seed", range(12))
def test_top_k_is_the_exhaustive_ranking_compiled_and_in_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dim = int(rng.choice([7, 66, 384, 701]))  # 701: fewer query levels, so int32 scores cannot overflow
    rows = clustered(rng, int(rng.integers(50, 3000)), dim)
    index = NearestRows(rows)
    for _ in range(5):
        query = rows[rng.integers(len(rows))].astype(np.float32) + rng.standard_normal(dim).astype(np.float32) * 0.05
        query /= np.linalg.norm(query)
        for k in (1, 10, 100, len(rows) + 5):
            want_ids, want_cos = exhaustive_top_k(rows, query, k)
            ids, cos = index.top_k(query, k)
            assert ids.tolist() == want_ids.tolist() and cos.tolist() == want_cos.tolist(), (dim, k)
            with kernels.python_only():
                py_ids, py_cos = NearestRows(rows).top_k(query, k)
            assert py_ids.tolist() == want_ids.tolist() and py_cos.tolist() == want_cos.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_an_unfinished_index_ranks_its_written_rows_as_if_they_were_all(seed: int) -> None:
    """Rows not written yet (zeros) are never returned, and the written ones come in the exhaustive
    ranking of the written rows alone: also when an empty row's 0 outscores written rows (random
    rows have cosines below 0), or fewer rows are written than asked for."""
    rng = np.random.default_rng(seed)
    dim = int(rng.choice([7, 66, 384]))
    if seed % 2:
        rows = clustered(rng, int(rng.integers(50, 2000)), dim)
    else:  # cosines on both sides of 0
        rows = rng.standard_normal((900, dim))
        rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float16)
    written = rng.random(len(rows)) < rng.choice([0.02, 0.3, 0.9])
    rows[~written] = 0.0
    ids_of = np.flatnonzero(written)
    for mode in ("compiled", "numpy"):
        with kernels.python_only() if mode == "numpy" else contextlib.nullcontext():
            index = NearestRows(rows, written)
            for _ in range(4):
                query = rng.standard_normal(dim).astype(np.float32)
                query /= np.linalg.norm(query)
                for k in (1, 10, 100, len(rows)):
                    want_ids, want_cos = exhaustive_top_k(rows[written], query, k)
                    ids, cos = index.top_k(query, k)
                    assert ids.tolist() == ids_of[want_ids].tolist() and cos.tolist() == want_cos.tolist(), (mode, k)
    nothing = NearestRows(np.zeros((5, 0), np.float16), np.zeros(5, bool))
    assert nothing.top_k(np.ones(3, np.float32), 10)[0].tolist() == []


@pytest.mark.parametrize("dim", [1, 2, 3, 5, 383, 384])
def test_cosines_are_the_same_floats_compiled_and_in_numpy(dim: int) -> None:
    rng = np.random.default_rng(dim)
    rows = clustered(rng, 400, dim)
    query = rng.standard_normal(dim).astype(np.float32)
    ids = rng.integers(400, size=50)
    compiled = exact_cosines(rows, query, ids)
    with kernels.python_only():
        assert exact_cosines(rows, query, ids).tolist() == compiled.tolist()
    assert compiled == pytest.approx(rows[ids].astype(np.float64) @ query.astype(np.float64), abs=1e-12)


@pytest.mark.skipif(kernels.RANKING is None, reason="the compiled ranking kernel is not built")
def test_the_compiled_quantizer_gives_the_numpy_codes_and_bounds() -> None:
    rows = clustered(np.random.default_rng(5), 3000, 384)
    compiled = NearestRows(rows)
    codes, step, widest, residual = quantize(rows)
    assert np.array_equal(compiled.codes, codes) and compiled.step.tolist() == step.tolist()
    assert compiled.widest == widest and compiled.residual == pytest.approx(residual, rel=1e-12)
    # the bounds hold: every row within residual of its codes, each value within step / 2
    decoded = codes * step
    assert np.linalg.norm(rows.astype(np.float64) - decoded, axis=1).max() <= residual * (1 + 1e-12)
    assert (np.abs(rows.astype(np.float64) - decoded) <= step / 2 * (1 + 1e-12)).all()


def test_only_rows_that_can_reach_the_top_k_are_scored_and_the_codes_are_a_quarter_of_float32() -> None:
    rng = np.random.default_rng(3)
    rows = clustered(rng, 20_000, 384)
    index = NearestRows(rows)
    assert index.codes.nbytes == rows.size and index.codes.dtype == np.int8
    query = rows[5].astype(np.float32)
    assert 100 <= len(index.candidates(query, 100)) < len(rows) // 4
    assert index.top_k(query, 100)[0].tolist() == exhaustive_top_k(rows, query, 100)[0].tolist()


@pytest.mark.skipif(kernels.RANKING is None, reason="the compiled ranking kernel is not built")
def test_the_kernels_refuse_mismatched_shapes_and_ids() -> None:
    rows = np.zeros((4, 3), np.float16)
    with pytest.raises(ValueError):
        kernels.RANKING.near_cosines(rows, np.zeros(3), np.array([4], np.int64))
    with pytest.raises(ValueError):
        kernels.RANKING.near_candidates(np.zeros(10, np.int8), np.zeros(3, np.int16), 1, 0)


def test_a_refreshed_index_ranks_base_and_delta_as_one_matrix_and_quantizes_only_the_delta(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """After an edit the reader has a base (with the edited note's chunks gone) and a delta: its top k
    is the exhaustive ranking of the merged rows, and the base's quantized rows are the ones kept."""
    from ragdesk.core.build import build_index

    from ..conftest import write_notes
    from .test_dense import HashEmbedder

    words = "cats dogs birds fish trees rivers stones clouds rain snow wind sun moon stars".split()
    rng = np.random.default_rng(11)
    notes = {f"n{i:02d}.md": " ".join(rng.choice(words, size=12)) for i in range(60)}
    folder = write_notes(tmp_path / "notes", notes)
    emb = HashEmbedder()
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    embed_missing(lib, emb)  # the meaning index, then searched
    base_rows = lib.nearest(emb.name).parts[0]
    (folder / "n07.md").write_text("cats cats cats and a new note about rain", encoding="utf-8")
    (folder / "n30.md").write_text("rain on stones", encoding="utf-8")
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert len(new.segments) == 2
    embed_missing(new, emb)  # the delta's own rows
    index = new.nearest(emb.name)
    assert index.parts[0] is base_rows  # the base segment's quantized rows, not quantized again
    merged = np.asarray(meaning_matrix(new, emb))
    # the replaced notes' old texts: their old chunks lead the base's own ranking but are gone
    for text in (notes["n07.md"], notes["n30.md"], "cats and rain", "moon stars wind"):
        query = emb.embed_query(text)
        for k in (1, 5, 200):
            ids, cos = index.top_k(query, k)
            want_ids, want_cos = exhaustive_top_k(merged, query, k)
            assert ids.tolist() == want_ids.tolist() and cos.tolist() == want_cos.tolist(), (text, k)


def test_a_read_only_cache_still_searches_by_meaning(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Embeddings that cannot be stored stay in memory and are searched from there: the same hits and
    cosines as when they are stored."""
    from ragdesk.core import fileio
    from ragdesk.core.build import build_index

    from ..conftest import write_notes
    from .test_dense import HashEmbedder

    notes = {"a.md": "# Cats\n\ncats purr and sleep", "b.md": "# Dogs\n\ndogs bark", "c.md": "# Birds\n\nbirds sing"}
    stored, _ = build_index(write_notes(tmp_path / "n1", notes), tmp_path / "idx1", workers=1)
    want = stored.search("dogs bark", mode="dense", embedder=HashEmbedder()).hits
    lib, _ = build_index(write_notes(tmp_path / "n2", notes), tmp_path / "idx2", workers=1)

    def refused(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(fileio, "preallocated_array", refused)
    monkeypatch.setattr(fileio, "save_array", refused)
    got = lib.search("dogs bark", mode="dense", embedder=HashEmbedder()).hits
    assert not list(lib.generation.glob("dense-*"))  # nothing stored
    assert [(h.path, h.score) for h in got] == [(h.path, h.score) for h in want] and got[0].path == "b.md"


@pytest.mark.skipif(kernels.RANKING is None or kernels.TEXT is None, reason="the compiled kernels are not built")
def test_a_refused_argument_releases_the_buffers_taken_before_it() -> None:
    """Each kernel takes its buffers in order; when one is refused, those already held are released
    (a bytearray whose buffer is still held cannot grow)."""
    codes = bytearray(6)
    with pytest.raises(TypeError, match="query: expected items of 2 bytes"):
        kernels.RANKING.near_candidates(codes, np.zeros(3, np.int32), 1, 0)
    codes.extend(b"\0")
    blob = bytearray(b"a\nb")
    with pytest.raises(TypeError, match="order: expected items of 4 bytes"):
        kernels.TEXT.find_term(blob, np.array([0, 2, 4], np.int64), np.zeros(2, np.int64), "a")
    blob.extend(b"\nc")
    rows = np.zeros((2, 3), np.float16)
    with pytest.raises(TypeError, match="ids: expected items of 8 bytes"):
        kernels.RANKING.near_cosines(rows, np.zeros(3), np.zeros(1, np.int32))
