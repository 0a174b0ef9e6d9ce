""" "Why not this note?": the expected note's best chunk, its rank, and every term beside the top hit's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.explain import ordinal
from ragdesk.core.params import SearchParams
from ragdesk.core.reader import IndexReader
from ragdesk.core.whynot import NotIndexed, why_not

from ..conftest import write_notes

FILLER = " ".join(f"word{i}" for i in range(60))
NOTES = {
    "top.md": "# Rebase\n\nInteractive rebase rewrites history, rebase often and rebase carefully.\n",
    "mid.md": f"# Branches\n\nA rebase moves a branch.\n\n{FILLER} {FILLER}\n\n"
    "## Later\n\nRebase history, again history.\n",
    "far.md": f"# History\n\nThe history of the project. {FILLER}\n",
    "other.md": "# Cats\n\nCats sleep all day.\n",
    "bin.md": b"\x00\x01binary",
}


@pytest.fixture
def lib(tmp_path: Path) -> IndexReader:
    library, _ = build_index(write_notes(tmp_path / "notes", NOTES), tmp_path / "idx", workers=1)
    return library


def test_why_not_matches_the_explanation_and_the_rank(lib: IndexReader) -> None:
    cfg = AnalyzerConfig("stems")
    why = why_not(lib, "rebase history of the cats", "far.md", SearchParams(cfg, k=2))
    (chunk,) = list(lib.chunks_of_note(lib.note_index("far.md")))
    assert why.chunk_id == chunk
    assert [r.to_json() for r in why.terms] == [
        r.to_json() for r in lib.searcher.explain("rebase history of the cats", chunk, cfg)
    ]
    assert why.score == pytest.approx(sum(r.contribution for r in why.terms))
    assert why.bm25_rank == why.rank == lib.searcher.rank_of("rebase history of the cats", chunk, cfg)
    result = lib.search("rebase history of the cats", analyzer=cfg, k=2)
    assert why.top_chunk_id == result.hits[0].chunk_id
    assert [r.to_json() for r in why.top_terms] == [r.to_json() for r in result.hits[0].explain]
    assert why.gap_to_k == pytest.approx(result.hits[1].score - why.score)
    assert "rebas (not in this chunk)" in why.missing_terms
    # stems keep every word; the query's English stop words are left out, and said so
    assert why.missing_terms[:2] == ["of (English stop word)", "the (English stop word)"]
    kept = why_not(lib, "rebase history of the cats", "far.md", SearchParams(replace(cfg, query_language="off"), k=2))
    assert not [m for m in kept.missing_terms if "stop word" in m or "dropped" in m]


def test_best_chunk_of_a_long_note_and_terms_in_no_note(lib: IndexReader) -> None:
    why = why_not(lib, "rebase history zebra", "mid.md", SearchParams(AnalyzerConfig("words"), k=1))
    chunks = lib.chunks_of_note(lib.note_index("mid.md"))
    assert len(chunks) >= 2 and why.chunk_id != chunks[0]  # its best chunk, not its first
    assert "again history" in lib.chunk(why.chunk_id).text
    assert "zebra (in no note)" in why.missing_terms
    assert why.gap_to_k > 0 or why.rank == 1


def test_a_note_that_is_not_indexed_says_why(lib: IndexReader) -> None:
    with pytest.raises(NotIndexed, match=r"bin.md is not indexed \(it was skipped: binary file"):
        why_not(lib, "rebase", "bin.md")
    with pytest.raises(NotIndexed, match="nope.md is not indexed \\(no such note in the index\\)"):
        why_not(lib, "rebase", "nope.md")


def test_cli_why_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_notes(tmp_path / "notes", NOTES)
    args = ["search", str(folder), "rebase history", "--index-dir", str(tmp_path / "idx"), "-k", "1"]
    assert main([*args, "--json", "--why-not", "far.md"]) == 0
    data = json.loads(capsys.readouterr().out)
    why = data["why_not"]
    assert set(why) >= {"path", "rank", "chunk_id", "bm25_rank", "dense_rank", "terms", "missing_terms", "gap_to_k"}
    assert why["path"] == "far.md" and why["rank"] == why["bm25_rank"] > 1 and why["dense_rank"] is None
    assert why["terms"][0]["term"] == "rebas" and why["gap_to_k"] > 0
    assert main([*args, "--why-not", str(folder / "far.md")]) == 0  # a path as a shell completes it
    out = capsys.readouterr().out
    assert "Why not far.md? Its best chunk is 3rd by keywords (BM25 " in out and "below the 1st's score)" in out
    assert main([*args, "--why-not", "nope.md"]) == 2
    assert "nope.md is not indexed" in capsys.readouterr().err


def test_hybrid_why_not_gives_three_consistent_ranks(tmp_path: Path) -> None:
    """In hybrid mode the answer used to say "does not rank (no query term in it)" beside a table of
    found terms, and "within the top 30" for a BM25 score that BM25 mode called below it. Now: the
    note's rank by keywords, by meaning and in the fused list, each as the rankings themselves say."""
    from .test_dense import HashEmbedder

    notes = {
        f"n{i:02d}.md": f"# N{i}\n\n" + "apple " * (i % 7 + 1) + f"pie crust{i % 5} oven " * (i % 3) for i in range(40)
    }
    lib, _ = build_index(write_notes(tmp_path / "n", notes), tmp_path / "idx", workers=1)
    emb = HashEmbedder()
    query, k = "apple pie crust3", 10
    every = lib.n_chunks
    keyword = [h.chunk_id for h in lib.search(query, k=every).hits]
    meaning = [h.chunk_id for h in lib.search(query, k=every, mode="dense", group=False, embedder=emb).hits]
    fused = [h.path for h in lib.search(query, k=every, mode="hybrid", embedder=emb).hits]
    for path in ("n13.md", "n30.md", fused[0], fused[k + 2]):
        why = why_not(lib, query, path, SearchParams(k=k, mode="hybrid"), emb)
        assert why.bm25_rank == keyword.index(why.chunk_id) + 1 and why.dense_rank == meaning.index(why.chunk_id) + 1
        assert why.rank == (fused.index(path) + 1 if path in fused[: why.depth] else None)
        text = why.summary()
        assert f"{ordinal(why.bm25_rank)} by keywords and {ordinal(why.dense_rank)} by meaning" in text
        assert "no query word" not in text  # it has query words: never said otherwise
        if why.rank and why.rank > k:
            assert text.endswith(f"hybrid puts its note {ordinal(why.rank)}, {why.rank - k} places below the 10th.")
        elif why.rank:
            assert text.endswith(f"{ordinal(why.rank)}, within the top {k}.")
        names, rows = why.rank_table()
        assert names == ["This note", "Top hit", "The 10th"]
        assert rows[2] == ("In the hybrid list", [ordinal(why.rank) if why.rank else "beyond", "1st", "10th"])
    bm25 = why_not(lib, query, "n30.md", SearchParams(k=k), emb)
    assert bm25.rank == keyword.index(bm25.chunk_id) + 1 and bm25.dense_rank is None
    assert [label for label, _ in bm25.rank_table()[1]] == ["By keywords", "In the bm25 list"]


def test_hybrid_why_not_names_the_exclusion_that_left_the_note_out(tmp_path: Path) -> None:
    """Hybrid, the note beyond the list and every chunk of it excluded: choosing its best chunk by the
    fusion's score reused the analyzer's variable name, and naming the exclusion then failed on a
    FusionConfig ("has no attribute 'parts'")."""
    from .test_dense import HashEmbedder

    notes = {
        f"n{i:02d}.md": f"# N{i}\n\n" + "apple " * (i % 7 + 1) + f"pie crust{i % 5} oven " * (i % 3) for i in range(40)
    }
    lib, _ = build_index(write_notes(tmp_path / "n", notes), tmp_path / "idx", workers=1)
    why = why_not(lib, "apple pie -crust3", "n08.md", SearchParams(k=10, mode="hybrid"), HashEmbedder())
    assert why.left_out_by == ["every chunk of it holds crust3, which -crust3 leaves out"]
    assert why.summary() == "The query leaves it out: every chunk of it holds crust3, which -crust3 leaves out."
