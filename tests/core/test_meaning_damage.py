"""A damaged meaning index is noticed, never ranked: BM25 commands never read it, auto search falls
back to BM25 instead of ranking with it, and `ragdesk index` says what was wrong in one line and
embeds it again (with --verify, also bytes altered in place, by the checksum)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragdesk.cli import main
from ragdesk.core import dense, embeddings, row_sums
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes
from .test_meaning_storage import Tiny

NOTES = {f"n{i:02}.md": f"# Note {i}\n\nabout rebase number {i} and more\n" for i in range(6)}


def _damage(path: Path, how: str) -> None:
    """Damage the stored rows the way a disk, a sync tool or a hand does (issue 52's cases)."""
    if how == "empty":
        path.write_bytes(b"")
        return
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:200])
        return
    rows = np.load(path).astype(np.float32)
    if how == "bit":  # one bit of one value, in place
        raw = bytearray(path.read_bytes())
        raw[len(raw) - rows.size * 2 + 2 * 8 + 1] ^= 0x04
        path.write_bytes(bytes(raw))
        return
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
    elif how == "swapped":
        rows[[1, 4]] = rows[[4, 1]]
    elif how == "sign":
        rows[2] = -rows[2]
    elif how == "random":  # unit vectors, but not these notes'
        rows = np.random.default_rng(9).normal(size=rows.shape)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
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


def _search(folder: Path, idx: Path, capsys) -> dict:  # type: ignore[no-untyped-def]
    assert main(["search", str(folder), "rebase number 3", "--index-dir", str(idx), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


DAMAGE = ["empty", "truncated", "dimension", "inf", "nan", "zeroed", "bit", "swapped", "sign", "random", "reversed"]


@pytest.mark.parametrize("how", DAMAGE)
def test_damage_is_never_ranked_said_and_embedded_again(embedded, capsys, how: str) -> None:  # type: ignore[no-untyped-def]
    """Each damage is found before a search ranks with the rows (a row zeroed, a bit flipped, rows
    swapped, a sign flipped, random unit rows were ranked in silence: issue 52): auto searches by
    BM25 and says why; a plain `index` says it in one line and embeds it again; then the search is
    the one before the damage."""
    folder, idx, path = embedded
    capsys.readouterr()
    before = _search(folder, idx, capsys)
    assert before["mode"] == "hybrid"
    _damage(path, how)
    common = ["--index-dir", str(idx)]
    assert main(["search", str(folder), "rebase", "--mode", "bm25", "--json", *common]) == 0  # BM25: untouched
    assert json.loads(capsys.readouterr().out)["hits"]
    during = _search(folder, idx, capsys)
    assert during["mode"] == "bm25"
    assert during["mode_reason"].startswith("BM25: the meaning index is damaged (")
    assert main(["index", str(folder), "--no-dense", "--json", *common]) == 0
    assert json.loads(capsys.readouterr().out)["meaning_index"]["complete"] is False
    assert not IndexReader.open(folder, idx).has_meaning(Tiny.name)  # auto stays on BM25
    assert main(["index", str(folder), "--json", *common]) == 0
    out = capsys.readouterr()
    assert out.err.count("was damaged (") == 1 and "again" in out.err
    meaning = json.loads(out.out)["meaning_index"]
    assert meaning["complete"] is True and meaning["embedded_now"] == len(NOTES)
    assert embeddings.rows_damage(IndexReader.open(folder, idx).segments[0], Tiny.name, 8) is None
    after = _search(folder, idx, capsys)
    assert [(h["path"], h["score"]) for h in after["hits"]] == [(h["path"], h["score"]) for h in before["hits"]]


def test_only_the_damaged_blocks_are_embedded_again(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """At scale a whole segment is hours of embedding: the block checksums say which rows to redo."""
    monkeypatch.setattr(row_sums, "BLOCK_ROWS", 2)  # six rows in three blocks
    embedded_ = embedded.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]
    folder, idx, path = embedded_
    assert json.loads(path.with_name(f"dense-{Tiny.name}.sum.json").read_text())["block_rows"] == 2
    _damage(path, "bit")  # row 4: the third block
    capsys.readouterr()
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 0
    out = capsys.readouterr()
    assert "was damaged (1 of 3 blocks of rows altered (checksum)); embedding those 2 rows again" in out.err
    meaning = json.loads(out.out)["meaning_index"]
    assert (meaning["embedded_now"], meaning["complete"]) == (2, True)
    assert embeddings.rows_damage(IndexReader.open(folder, idx).segments[0], Tiny.name, 8) is None


def test_an_index_without_block_sums_is_checked_by_verify(embedded, capsys) -> None:  # type: ignore[no-untyped-def]
    """An index completed before block checksums were kept: unit rows reversed pass the open-time
    checks; `--verify` still finds them by the whole file's checksum."""
    folder, idx, path = embedded
    sums = path.with_name(f"dense-{Tiny.name}.sum.json")
    sums.write_text(json.dumps({k: v for k, v in json.loads(sums.read_text()).items() if k != "blocks"}))
    _damage(path, "reversed")
    capsys.readouterr()
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 0
    assert "damaged" not in capsys.readouterr().err
    assert main(["index", str(folder), "--index-dir", str(idx), "--verify", "--json"]) == 0
    out = capsys.readouterr()
    assert "was damaged (a checksum that does not match (altered bytes)); embedding it again" in out.err
    assert json.loads(out.out)["meaning_index"]["embedded_now"] == len(NOTES)
