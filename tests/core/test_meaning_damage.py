"""A damaged meaning index is noticed, never ranked: BM25 commands never read it, auto search falls
back to BM25 instead of ranking with it, and `ragdesk index` says what was wrong in one line and
embeds it again (with --verify, also bytes altered in place, by the checksum)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragdesk.cli import main
from ragdesk.core import dense, embeddings
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes
from .test_meaning_storage import Tiny

NOTES = {f"n{i:02}.md": f"# Note {i}\n\nabout rebase number {i} and more\n" for i in range(6)}


def _damage(path: Path, how: str) -> None:
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    else:
        rows = np.load(path).astype(np.float32)
        if how == "dimension":
            rows = np.hstack([rows, rows])[:, :12]
        elif how == "inf":
            rows[2, 0] = np.inf
        elif how == "nan":
            rows[1] = np.nan
        elif how == "zeroed":
            rows[3] = 0
        elif how == "reversed":
            rows = rows[::-1].copy()
        np.save(path, rows.astype(np.float16))


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    monkeypatch.setattr(dense, "load_embedder", lambda spec=None: Tiny())
    folder = write_notes(tmp_path / "n", NOTES)
    idx = tmp_path / "idx"
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 0
    lib = IndexReader.open(folder, idx)
    assert lib.has_meaning(Tiny.name)
    return folder, idx, embeddings.stored_path(lib.segments[0], Tiny.name)


@pytest.mark.parametrize("how", ["empty", "truncated", "dimension", "inf", "nan", "zeroed"])
def test_damage_is_said_and_embedded_again(embedded, capsys, how: str) -> None:  # type: ignore[no-untyped-def]
    folder, idx, path = embedded
    capsys.readouterr()
    _damage(path, how)
    common = ["--index-dir", str(idx)]
    assert main(["search", str(folder), "rebase", "--mode", "bm25", "--json", *common]) == 0  # BM25: untouched
    assert json.loads(capsys.readouterr().out)["hits"]
    assert main(["index", str(folder), "--no-dense", "--json", *common]) == 0
    structural = how in ("empty", "truncated", "dimension", "inf", "nan")  # seen without the model: not complete
    assert json.loads(capsys.readouterr().out)["meaning_index"]["complete"] is not structural
    assert IndexReader.open(folder, idx).has_meaning(Tiny.name) is not structural  # auto stays on BM25
    assert main(["index", str(folder), "--json", *common]) == 0
    out = capsys.readouterr()
    assert out.err.count("was damaged (") == 1 and "embedding it again" in out.err
    meaning = json.loads(out.out)["meaning_index"]
    assert meaning["complete"] is True and meaning["embedded_now"] == len(NOTES)
    assert embeddings.rows_damage(IndexReader.open(folder, idx).segments[0], Tiny.name, 8) is None


def test_bytes_altered_in_place_are_found_by_verify(embedded, capsys) -> None:  # type: ignore[no-untyped-def]
    folder, idx, path = embedded
    _damage(path, "reversed")  # every row still a unit vector: only the checksum tells
    capsys.readouterr()
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 0
    assert "damaged" not in capsys.readouterr().err  # a plain run checks structure, not bytes
    assert main(["index", str(folder), "--index-dir", str(idx), "--verify", "--json"]) == 0
    out = capsys.readouterr()
    assert "was damaged (a checksum that does not match (altered bytes)); embedding it again" in out.err
    assert json.loads(out.out)["meaning_index"]["embedded_now"] == len(NOTES)
