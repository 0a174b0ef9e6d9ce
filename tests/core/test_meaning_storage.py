"""A meaning index that cannot be stored mid-way (a full disk) stops `ragdesk index` with one line
naming the cause and exit status 2, keeping the batches stored before: never exit 0 with
`complete: false` and no reason, after embedding the rest in memory for nothing."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest

from ragdesk.cli import main
from ragdesk.core import dense, fileio
from ragdesk.core.build import build_index
from ragdesk.core.dense import DEFAULT_EMBEDDER, embedder_name
from ragdesk.core.meaning_writer import embed_missing

from ..conftest import write_notes


class Tiny:
    """A stand-in model: unit vectors from the text's hash (what is stored is what is tested)."""

    name = embedder_name(DEFAULT_EMBEDDER)
    batch = 2

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.array([np.random.default_rng(sum(map(ord, t))).normal(size=8) for t in texts], np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def test_a_full_disk_while_embedding_exits_2_and_keeps_the_stored_batches(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    monkeypatch.setattr(dense, "load_embedder", lambda spec=None: Tiny())
    folder = write_notes(tmp_path / "n", {f"n{i:02}.md": f"# Note {i}\n\nabout topic {i} and more\n" for i in range(9)})
    real = fileio.replace_atomically
    writes = {"done bits": 0}

    def filling_up(path: Path, data: bytes) -> None:
        if path.name.endswith(".done"):
            writes["done bits"] += 1
            if writes["done bits"] > 2:  # two batches stored, then the disk is full
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(fileio, "replace_atomically", filling_up)
    idx = tmp_path / "idx"
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 2
    out = capsys.readouterr()
    meaning = json.loads(out.out)["meaning_index"]
    assert meaning["reason"].startswith("stopped: cannot store the meaning index in ")
    assert "No space left on device; the batches embedded before are kept" in meaning["reason"]
    assert (meaning["embedded"], meaning["chunks"], meaning["complete"]) == (4, 9, False)
    assert out.err.count("ragdesk: error: cannot store the meaning index") == 1
    monkeypatch.setattr(fileio, "replace_atomically", real)  # space again: the next run continues
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 0
    meaning = json.loads(capsys.readouterr().out)["meaning_index"]
    assert (meaning["embedded_now"], meaning["complete"]) == (5, True)


def _resident_kb(path: Path) -> int:
    """This process's resident memory in maps of `path` (Linux: /proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:
            inside = line.endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists() or not hasattr(os, "pwrite"), reason="Linux's smaps")
def test_rows_are_written_through_the_file_not_left_resident_in_the_map(tmp_path: Path) -> None:
    """A long embedding run writes every row of its partial file once: written through the map, each
    touched page stayed resident in the process (139 MB at 180,842 chunks, over the 400 MB goal).
    Through the file, the rows are stored and the map reads them, but stay out of this process."""
    path = tmp_path / "dense.partial.npy"
    rows = fileio.preallocated_array(path, np.float16, (8192, 384))  # 6 MB
    values = np.random.default_rng(3).normal(size=(8192, 384)).astype(np.float16)
    order = np.random.default_rng(4).permutation(8192)  # newest notes first: scattered, as in a run
    for start in range(0, 8192, 64):
        fileio.write_rows(rows, order[start : start + 64], values[order[start : start + 64]])
    assert _resident_kb(path) < 6144 // 10  # through the map it is the whole 6 MB (checked below)
    assert np.array_equal(np.load(path), values) and np.array_equal(np.asarray(rows[:5]), values[:5])
    rows[:] = values  # the old way, through the map: every page resident
    rows.flush()
    assert _resident_kb(path) >= 6144 * 9 // 10


class Wide(Tiny):
    """Tiny with e5's 384 dimensions, so the stored rows span megabytes."""

    batch = 64

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.array([np.random.default_rng(sum(map(ord, t))).normal(size=384) for t in texts], np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux's smaps")
def test_note_texts_read_for_the_meaning_index_do_not_stay_resident(tmp_path: Path) -> None:
    """Embedding reads every note's text from the index's memory-mapped notes.npy: each page read
    stayed resident in the build process (96 MB at the scale corpus, pushing it to 410 MB), and the
    complete rows' NaN check read all of them (139 MB more at the very end, 455 MB). Dropped once
    read, they are read again from the page cache when needed."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(3000)]
    folder = write_notes(
        tmp_path / "n", {f"n{i:03}.md": " ".join(rng.choice(words, 1500)) for i in range(200)}
    )  # ~1.8 MB of text
    reader, _ = build_index(folder, tmp_path / "idx", workers=1)
    notes = reader.segments[0].generation / "notes.npy"
    size_kb = notes.stat().st_size // 1024
    tiny = Wide()
    embed_missing(reader, tiny)
    assert reader.has_meaning(tiny.name)
    assert _resident_kb(notes) < size_kb // 10
    # the stored rows are checked for NaN once complete (every page read): not kept resident either
    rows = reader.segments[0].generation / f"dense-{tiny.name}.npy"
    assert rows.stat().st_size > 2 << 20 and _resident_kb(rows) < rows.stat().st_size // 1024 // 10
    reader.segments[0].chunk_texts()  # reading them all without the release: resident (the check holds)
    assert _resident_kb(notes) >= size_kb * 9 // 10


def _index_json(folder: Path, idx: Path, capsys) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    status = main(["index", str(folder), "--index-dir", str(idx), "--json"])
    out = capsys.readouterr()
    return status, {**json.loads(out.out)["meaning_index"], "err": out.err}


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_no_room_before_the_first_batch_is_no_success(tmp_path: Path, monkeypatch, capsys, code: int) -> None:  # type: ignore[no-untyped-def]
    """The disk full before the first batch: reserving the rows failed and was taken for a read-only
    cache, every row computed in memory, and `index` said "complete, 120 chunks embedded" over
    nothing stored (issue 52). It stops at once, exit 2, `complete: false`, nothing claimed kept."""
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    monkeypatch.setattr(dense, "load_embedder", lambda spec=None: Tiny())
    folder = write_notes(tmp_path / "n", {f"n{i:02}.md": f"# Note {i}\n\nabout topic {i}\n" for i in range(6)})
    idx = tmp_path / "idx"
    build_index(folder, idx, workers=1)
    real = fileio.preallocated_array
    calls = []

    def no_room(path: Path, dtype, shape):  # type: ignore[no-untyped-def]
        calls.append(path)
        path.write_bytes(b"\x93NUMPY")  # the header a full disk still took
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(fileio, "preallocated_array", no_room)
    status, meaning = _index_json(folder, idx, capsys)
    assert calls and status == 2
    assert (meaning["complete"], meaning["embedded"], meaning["chunks"]) == (False, 0, 6)
    assert meaning["reason"].startswith("stopped: cannot store the meaning index in ")
    assert f"{os.strerror(code)}; nothing was stored and the next run continues" in meaning["reason"]
    assert meaning["err"].count("ragdesk: error: cannot store the meaning index") == 1
    assert not list(idx.glob("gen-*/dense-*"))  # no header left behind as a "partial" run
    monkeypatch.setattr(fileio, "preallocated_array", real)
    status, meaning = _index_json(folder, idx, capsys)
    assert (status, meaning["complete"], meaning["embedded"]) == (0, True, 6)


def test_a_read_only_cache_is_never_called_complete(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Rows that could only be kept in memory (the cache read-only) still serve a search, but `index`,
    whose work is to store them, says they were not kept: exit 2, `complete: false`."""
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    monkeypatch.setattr(dense, "load_embedder", lambda spec=None: Tiny())
    folder = write_notes(tmp_path / "n", {f"n{i:02}.md": f"# Note {i}\n\nabout topic {i}\n" for i in range(5)})
    idx = tmp_path / "idx"
    build_index(folder, idx, workers=1)

    def read_only(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(fileio, "preallocated_array", read_only)
    monkeypatch.setattr(fileio, "save_array", read_only)
    status, meaning = _index_json(folder, idx, capsys)
    assert status == 2 and (meaning["complete"], meaning["embedded"]) == (False, 0)
    assert meaning["reason"] == f"stopped: cannot store the meaning index in {idx}: it is read-only; nothing was kept"


def test_no_room_for_the_finished_rows_is_said(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Rows held in memory (the partial file went away) whose final save finds the disk full: the
    failure was swallowed and the rows handed on as if stored."""
    from ragdesk.core.embeddings import MeaningIndexUnwritable, embed_plans, plan_segment

    folder = write_notes(tmp_path / "n", {f"n{i:02}.md": f"# Note {i}\n\nabout topic {i}\n" for i in range(3)})
    reader, _ = build_index(folder, tmp_path / "idx", workers=1)
    plan = plan_segment(reader.segments[0], Tiny.name)
    monkeypatch.setattr(fileio, "preallocated_array", lambda *a: (_ for _ in ()).throw(OSError(errno.EROFS, "ro")))

    def full(*_args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(fileio, "save_array", full)
    with pytest.raises(MeaningIndexUnwritable, match="No space left on device"):
        embed_plans([plan], Tiny())
