"""The CLI contract: subcommands, flags and JSON fields that scripts rely on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdesk.cli import main

from ..conftest import write_notes

NOTES = {
    "git.md": "# Git\n\n## Rebase\n\nInteractive rebase rewrites history.\n",
    "cs.md": "# Indukce\n\nDůkaz indukcí.\n",
    "bad.md": b"\x00\x01binary",
    "latin.txt": "caf\xe9".encode("cp1252"),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_json(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "index", str(folder), "--index-dir", str(tmp_path / "i"), "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["files"], data["chunks"]) == (3, 3)
    assert data["tokens"] == 15  # 10 words of text + 5 of titles and headings indexed as context
    assert isinstance(data["elapsed_s"], float)
    skipped = {s["path"]: s["reason"] for s in data["skipped"]}
    assert skipped["bad.md"].startswith("binary")
    assert "cp1252" in skipped["latin.txt"]
    code, out, _ = run(capsys, "index", str(folder), "--index-dir", str(tmp_path / "i"), "--json")
    assert json.loads(out)["rebuilt"] is False


def test_search_json_contract(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "search",
        str(folder),
        "rebase history",
        "-k",
        "3",
        "--analyzer",
        "words",
        "--k1",
        "1.5",
        "--b",
        "0.5",
        "--index-dir",
        str(tmp_path / "i"),
        "--json",
    )
    data = json.loads(out)
    assert code == 0
    assert {"query", "analyzer", "k1", "b", "N", "avgdl", "took_ms", "hits"} <= set(data)
    assert (data["analyzer"], data["k1"], data["b"], data["N"]) == ("words", 1.5, 0.5, 3)
    hit = data["hits"][0]
    assert {
        "rank",
        "score",
        "path",
        "chunk_id",
        "heading",
        "start_line",
        "end_line",
        "length",
        "text",
        "explain",
    } <= set(hit)
    assert (hit["rank"], hit["path"], hit["heading"], hit["start_line"], hit["end_line"]) == (
        1,
        "git.md",
        "Git › Rebase",
        1,
        5,
    )
    assert hit["length"] == 8  # 6 words + "git", "rebase" indexed as title and heading context
    assert [e["term"] for e in hit["explain"]] == ["rebase", "history"]
    assert {"term", "n_t", "idf", "f", "contribution"} <= set(hit["explain"][0])
    assert sum(e["contribution"] for e in hit["explain"]) == pytest.approx(hit["score"])


def test_search_batch_mode(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "a", "query": "rebase"}\n{"id": 7, "query": "indukce"}\n', encoding="utf-8")
    code, out, _ = run(capsys, "search", str(folder), "--queries", str(q), "--index-dir", str(tmp_path / "i"))
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [x["id"] for x in lines] == ["a", 7]
    assert lines[0]["hits"][0]["path"] == "git.md" and lines[1]["hits"][0]["path"] == "cs.md"


def test_prompt_and_analyze(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "prompt", str(folder), "What does rebase do?", "-k", "1", "--index-dir", str(tmp_path / "i")
    )
    assert code == 0
    assert out.startswith("Answer the question using only")
    assert "[1] (git.md › Git › Rebase, lines 1–5)\n> # Git" in out
    assert out.rstrip().endswith("Question: What does rebase do?")
    assert "1 excerpt" in err
    code, out, _ = run(capsys, "analyze", "Indukcí", "--analyzer", "trigrams")
    assert out.split() == ["_in", "ind", "ndu", "duk", "ukc", "kcí", "cí_"]


def test_errors_are_one_line_and_nonzero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "search", str(tmp_path / "missing"), "x")
    assert code == 2 and err.strip().count("\n") == 0 and "notes folder not found" in err
    code, _, err = run(capsys, "index", str(tmp_path), "--chunk-size", "10", "--overlap", "10")
    assert code == 2 and "overlap" in err


def test_module_entry_point_version() -> None:
    out = subprocess.run([sys.executable, "-m", "ragdesk", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("ragdesk ")
    from ragdesk.core.kernels import ranking_name, text_name

    assert out.stdout.strip().endswith(f"(ranking: {ranking_name()}, text: {text_name()})")


def test_damaged_postings_give_one_error_line_and_verify_rebuilds(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A derived index altered in place (same size): a small one fails its checksum on open and is
    derived again; a large one (not checksummed on open) makes search say so in one line and exit 2;
    `index --verify` checks every file, the derived ones included, and rebuilds."""
    import numpy as np

    from ragdesk.core import fileio

    index_dir = tmp_path / "i"
    assert run(capsys, "search", str(folder), "rebase", "--index-dir", str(index_dir))[0] == 0

    def damage() -> None:
        docs_file = next(index_dir.rglob("terms-stems*/docs.npy"))
        postings = np.load(docs_file, mmap_mode="r+")
        postings[:] = 2**31 - 1
        postings.flush()
        del postings

    damage()
    code, out, err = run(capsys, "search", str(folder), "rebase", "--index-dir", str(index_dir), "--json")
    assert code == 0 and err == "" and json.loads(out)["hits"][0]["path"] == "git.md"  # repaired
    damage()
    monkeypatch.setattr(fileio, "CRC_ON_OPEN_BYTES", 0)  # as for a file over the size checksummed on open
    code, out, err = run(capsys, "search", str(folder), "rebase", "--index-dir", str(index_dir))
    assert code == 2 and err.count("\n") == 1 and "damaged" in err and "--verify" in err
    code, out, _ = run(capsys, "index", str(folder), "--index-dir", str(index_dir), "--json")
    assert code == 0
    code, out, _ = run(capsys, "index", str(folder), "--index-dir", str(index_dir), "--verify", "--json")
    assert code == 0 and json.loads(out)["rebuilt"] is True
    code, out, _ = run(capsys, "search", str(folder), "rebase", "--index-dir", str(index_dir), "--json")
    assert code == 0 and json.loads(out)["hits"][0]["path"] == "git.md"


@pytest.mark.parametrize("params", [("--b", "3"), ("--k1", "-5"), ("--b", "nan")])
def test_bm25_parameters_out_of_range_are_one_clear_error(
    params: tuple[str, str], folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Negative contributions would break the exact pruning; the range is BM25's own."""
    code, out, err = run(capsys, "search", str(folder), "commit", *params, "--index-dir", str(tmp_path / "i"))
    assert code == 2 and out == ""
    assert err.strip().startswith("ragdesk: error: --k1 must be at least 0 and --b between 0 and 1")
    assert len(err.strip().splitlines()) == 1


def test_prompt_ranks_every_chunk_in_its_place_unless_grouped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hybrid groups by note by default, which would fold a.md's second chunk under its first and
    leave it out of the prompt; the prompt ranks every chunk in its place (as the window does)."""
    from ragdesk.core import dense

    from .test_dense import HashEmbedder

    monkeypatch.setitem(dense.BUNDLED, "hash", HashEmbedder)
    filler = " ".join(f"w{i}" for i in range(70))  # each section one chunk, cut at its heading
    notes = {
        "a.md": f"# Sourdough\n\n## Starter\n\nFeed the starter every day. {filler}\n\n"
        f"## Baking\n\nBake the bread hot. {filler}\n",
        "b.md": f"# Pancakes\n\nPancakes need no bread. {filler}\n",
    }
    folder = write_notes(tmp_path / "n", notes)
    argv = ["prompt", str(folder), "How do I feed a sourdough starter and bake the bread?", "-k", "2"]
    argv += ["--index-dir", str(tmp_path / "i"), "--mode", "hybrid", "--embedder", "hash"]
    code, out, _ = run(capsys, *argv)
    sources = [line.split(",")[0] for line in out.splitlines() if line.startswith("[")]
    assert code == 0 and sources == ["[1] (a.md › Sourdough › Starter", "[2] (a.md › Sourdough › Baking"]
    code, out, _ = run(capsys, *argv, "--group")
    sources = [line.split(",")[0] for line in out.splitlines() if line.startswith("[")]
    assert code == 0 and sources == ["[1] (a.md › Sourdough › Starter", "[2] (b.md › Pancakes"]
