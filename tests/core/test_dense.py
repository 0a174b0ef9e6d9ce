"""Dense retrieval and reciprocal rank fusion: the arithmetic, the ranking, the explanation."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from ragdesk.core import build as build_mod
from ragdesk.core.build import build_index
from ragdesk.core.fusion import FUSIONS, Fusion, rrf_fuse
from ragdesk.core.meaning_writer import meaning_matrix
from ragdesk.core.nearest import NearestRows
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes


def test_rrf_seed_example() -> None:
    """A is 1st and 30th -> 1/61 + 1/90 = 0.0275; B is 5th and 5th -> 2/65 = 0.0308: B wins."""
    a, b = Fusion(1, 9.0, 30, 0.2), Fusion(5, 4.0, 5, 0.5)
    assert round(a.score, 4) == 0.0275 and a.bm25_share == 1 / 61 and a.dense_share == 1 / 90
    assert round(b.score, 4) == 0.0308 and b.score == 2 / 65
    bm25 = [(1, 9.0), (7, 8.0), (8, 7.5), (9, 7.0), (2, 6.0)]  # A = chunk 1 first, B = chunk 2 fifth
    dense = [(10 + i, 0.9 - i / 100) for i in range(4)] + [(2, 0.5)] + [(20 + i, 0.4) for i in range(24)] + [(1, 0.2)]
    fused = rrf_fuse(bm25, dense, k=3)
    assert [doc for doc, _ in fused][:2] == [2, 1]
    assert fused[0][1].bm25_rank == 5 and fused[0][1].dense_rank == 5
    assert fused[1][1].bm25_rank == 1 and fused[1][1].dense_rank == 30


def test_rrf_only_one_engine_and_ties() -> None:
    fused = rrf_fuse([(3, 1.0)], [(4, 0.9)], k=5)
    assert [(d, f.score) for d, f in fused] == [(3, 1 / 61), (4, 1 / 61)]  # tie broken by chunk id
    assert fused[0][1].dense_rank is None and "dense: not in its top list" in fused[0][1].describe()


def test_dense_top_k_orders_by_cosine() -> None:
    m = np.array([[1, 0], [0.6, 0.8], [0, 1], [0.6, 0.8]], dtype=np.float16)
    ids, cos = NearestRows(m).top_k(np.array([0.6, 0.8], dtype=np.float32), 3)
    assert ids.tolist() == [1, 3, 2]  # equal cosines: lower chunk id first
    assert cos[0] == pytest.approx(1.0, abs=1e-3)


class HashEmbedder:
    """A deterministic stand-in: bag of hashed words, normalized (no model needed)."""

    name = "hash-test"
    batch = 64

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 64), np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, int(hashlib.md5(w.strip(".,?").encode()).hexdigest(), 16) % 64] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def test_hybrid_and_dense_modes_explain_their_ranks(tmp_path: Path) -> None:
    folder = write_notes(
        tmp_path / "n",
        {
            "a.md": "# Cats\n\ncats purr and sleep all day",
            "b.md": "# Dogs\n\ndogs bark at the mailman",
            "c.md": "# Birds\n\nbirds sing in the morning",
        },
    )
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    emb = HashEmbedder()
    dense = lib.search("dogs bark", mode="dense", embedder=emb)
    assert dense.mode == "dense" and dense.hits[0].path == "b.md"
    top = dense.hits[0]
    assert top.fusion is not None and top.fusion.dense_rank == 1 and top.fusion.bm25_rank == 1
    assert top.score == pytest.approx(top.fusion.cosine)
    hybrid = lib.search("dogs bark", mode="hybrid", embedder=emb, fusion="plain")
    h = hybrid.hits[0]
    assert h.path == "b.md" and h.score == pytest.approx(2 / 61)
    assert h.to_json()["fusion"]["rrf_bm25"] == pytest.approx(1 / 61)
    tuned = lib.search("dogs bark", mode="hybrid", embedder=emb).hits[0]  # the default: c and weight tuned
    c, w, note_w = FUSIONS["tuned"].c, FUSIONS["tuned"].dense_weight, FUSIONS["tuned"].note_weight
    assert tuned.path == "b.md" and tuned.score == pytest.approx(1 / (c + 1) + w / (c + 1) + note_w / (c + 1))
    assert tuned.fusion.describe().endswith(f"= {tuned.score:.4f}") and f"/({c}+1)" in tuned.fusion.describe()
    assert sum(r.contribution for r in h.explain) > 0  # the BM25 breakdown stays available beneath
    assert (lib.generation / "dense-hash-test.npy").is_file()  # stored beside the BM25 index
    with pytest.raises(RuntimeError, match="embedding backend"):
        lib.search("dogs", mode="hybrid")


def test_wordllama_backend_offline(tmp_path: Path) -> None:
    pytest.importorskip("wordllama")
    from ragdesk.core.dense import load_embedder

    emb = load_embedder("wordllama")
    v = emb.embed(["revert a commit that was already pushed", "sourdough starter feeding", "undo a pushed commit"])
    assert v.shape == (3, 256) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-4)
    assert v[2] @ v[0] > v[2] @ v[1] + 0.3


@pytest.mark.parametrize("delta", [False, True], ids=["merge-all", "delta-segment"])
def test_embeddings_refresh_incrementally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta: bool) -> None:
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0 if delta else 0.0)
    folder = write_notes(tmp_path / "n", {f"{c}.md": f"# {c}\n\nnote about {c} things" for c in "abcd"})
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)

    class Counting(HashEmbedder):
        embedded: list[str] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.embedded.extend(texts)
            return super().embed(texts)

    emb = Counting()
    first = np.asarray(meaning_matrix(lib, emb)).copy()
    assert len(emb.embedded) == lib.n_chunks == 4
    emb.embedded.clear()
    (folder / "b.md").write_text("# b\n\nnow about zebras", encoding="utf-8")
    (folder / "e.md").write_text("# e\n\nnew note", encoding="utf-8")
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert new.meaning_progress(emb.name) == (3, 5)  # b.md's old chunk, replaced in a delta, is not counted
    calls: list[tuple[int, int]] = []
    again = np.asarray(meaning_matrix(new, emb, progress=lambda d, t: calls.append((d, t))))
    assert calls == [(2, 2)]  # progress counts only the chunks that are embedded again
    assert sorted(emb.embedded) == sorted(new.chunk_texts()[i] for i in (1, 4))  # only b.md and e.md
    assert np.array_equal(again[[0, 2, 3]], first[[0, 2, 3]])
    assert np.array_equal(again, HashEmbedder().embed(new.chunk_texts()).astype(np.float16))
    assert (len(new.segments) == 2) == delta and new.has_meaning(emb.name)
    # A second refresh embeds only what changed since, and the index reopens with its embeddings.
    emb.embedded.clear()
    (folder / "c.md").write_text("# c\n\nnow about otters", encoding="utf-8")
    third, _ = build_index(folder, tmp_path / "idx", workers=1, previous=new)
    expected = HashEmbedder().embed(third.chunk_texts()).astype(np.float16)
    assert np.array_equal(np.asarray(meaning_matrix(third, emb)), expected)
    assert emb.embedded == [third.chunk_texts()[2]]
    reopened = IndexReader.open(folder, tmp_path / "idx")
    assert np.array_equal(np.asarray(reopened.stored_meaning(emb.name)), np.asarray(third.stored_meaning(emb.name)))


def test_model2vec_local_folder_backend(tmp_path: Path) -> None:
    """A user-chosen local model2vec folder works offline; a missing folder is a clear error."""
    pytest.importorskip("model2vec")
    pytest.importorskip("wordllama")
    from importlib import resources

    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from ragdesk.core.dense import DenseUnavailable, embedder_name, load_embedder

    tok = Tokenizer.from_file(
        str(resources.files("wordllama").joinpath("tokenizers", "l2_supercat_tokenizer_config.json"))
    )
    vectors = np.random.default_rng(0).normal(size=(tok.get_vocab_size(), 16)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=tok, normalize=True).save_pretrained(str(tmp_path / "m2v"))
    spec = f"model2vec:{tmp_path / 'm2v'}"
    emb = load_embedder(spec)
    v = emb.embed(["hello world", "notes about git"])
    assert v.shape == (2, 16) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert emb.name == embedder_name(spec) and emb.name.startswith("model2vec-m2v-")
    with pytest.raises(DenseUnavailable, match="local model folder"):
        load_embedder(f"model2vec:{tmp_path / 'nowhere'}")
    with pytest.raises(DenseUnavailable, match="unknown embedding model"):
        load_embedder("bert")


def test_a_bm25_only_build_job_keeps_every_models_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's build process without a model (not installed, or the meaning index turned off)
    merging an edit: the rows of every model stored before are kept for unchanged notes, not lost."""
    import threading

    from ragdesk.core.analyzers import AnalyzerConfig
    from ragdesk.core.jobs import BuildJob, Done, build_job
    from ragdesk.core.params import IndexSettings

    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)
    folder = write_notes(tmp_path / "n", {f"{c}.md": f"# {c}\n\nnote about {c} things" for c in "abcd"})
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    emb = HashEmbedder()
    first = np.asarray(meaning_matrix(lib, emb)).copy()
    (folder / "b.md").write_text("# b\n\nnow about zebras", encoding="utf-8")
    messages: list[object] = []

    class Queue:
        put = messages.append

    job = BuildJob(str(folder), str(tmp_path / "idx"), IndexSettings(), AnalyzerConfig(), embedder=None)
    build_job(job, Queue(), threading.Event())
    assert isinstance(messages[-1], Done) and not messages[-1].meaning_follows
    new = IndexReader.open(folder, tmp_path / "idx")
    assert new.generation != lib.generation and new.meaning_progress(emb.name) == (3, 4)
    again = np.asarray(meaning_matrix(new, emb))
    assert np.array_equal(again[[0, 2, 3]], first[[0, 2, 3]])
    assert np.array_equal(again, emb.embed(new.chunk_texts()).astype(np.float16))


def test_rows_survive_a_rebuild_for_other_load_settings(tmp_path: Path) -> None:
    """Adding an extension in Settings rebuilds everything (other settings), but the chunks of the
    notes already indexed are the same texts: their rows are kept; other chunk options drop them."""
    from ragdesk.core.chunking import ChunkOptions
    from ragdesk.core.loader import LoadOptions
    from ragdesk.core.params import IndexSettings

    folder = write_notes(tmp_path / "n", {"a.md": "# a\n\nabout apples", "b.md": "# b\n\nabout bees", "c.txt": "cats"})
    lib, _ = build_index(folder, tmp_path / "idx", IndexSettings(LoadOptions(extensions=(".md",))), workers=1)
    emb = HashEmbedder()
    first = np.asarray(meaning_matrix(lib, emb)).copy()
    wider = IndexSettings(LoadOptions(extensions=(".md", ".txt")))
    new, _ = build_index(
        folder, tmp_path / "idx", wider, workers=1, previous=lib
    )
    assert new.note_paths == ["a.md", "b.md", "c.txt"] and new.generation != lib.generation
    assert new.meaning_progress(emb.name) == (2, 3)
    assert np.array_equal(np.asarray(meaning_matrix(new, emb))[:2], first)
    smaller = IndexSettings(wider.load, ChunkOptions(size=40))
    other, _ = build_index(
        folder, tmp_path / "idx", smaller, workers=1, previous=new
    )
    assert other.meaning_progress(emb.name) == (0, 3)  # other chunk options: other texts, nothing reused
