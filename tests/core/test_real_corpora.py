"""Checks on the real corpora in ../shared/data (skipped when it is absent; CI has it)."""

from __future__ import annotations

from pathlib import Path

from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.evaluate import evaluate_beir, load_beir
from ragdesk.core.library import build_index


def test_scifact_test_ndcg_with_defaults(shared_data: Path, tmp_path: Path) -> None:
    """The default settings (tuned on train only) beat published BM25 (0.665-0.680) on the test split."""
    folder = shared_data / "beir-scifact"
    lib, report = build_index(folder / "corpus_md", tmp_path / "idx")
    assert report.files == 5183 and not report.skipped
    queries, qrels = load_beir(folder, "test")
    m = evaluate_beir(lib, queries, qrels, AnalyzerConfig())
    assert m["n"] == 300
    assert round(m["ndcg@10"], 4) == 0.7013


def test_multilingual_vault_loads_and_matches_inflections(shared_data: Path, tmp_path: Path) -> None:
    lib, report = build_index(shared_data / "obsidian-help" / "cs", tmp_path / "idx")
    assert report.files == 173 and [s for s in report.skipped if not s.loaded] == []
    # "synchronizovat" (infinitive) finds notes that say "synchronizace" (noun) through the stem "synch"
    r = lib.search("synchronizovat poznámky", AnalyzerConfig("stems"), k=5)
    assert r.hits and all("synch" in {x.term for x in h.explain if x.f} for h in r.hits)
    assert "Synchronizace" in r.hits[0].text  # the word itself never occurs in the query
