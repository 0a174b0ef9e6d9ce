"""Writing generations: a segment's files, a delta over a base, and the manifest written last
(a generation without a manifest is incomplete and never read)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import fileio, store
from .arrays import ranges
from .heap import release_freed_memory
from .lexicon import Words
from .loader import NoteFile, Skipped
from .params import IndexSettings
from .segment import ChunkTable, Segment
from .tokenize import BatchResult, NoteRecord, intern_words

PIECES_PER_CONCAT = 256  # arrays joined per np.concatenate: one call over tens of thousands stalls the window
Derive = Callable[[Path], Callable[[], None]]  # see build._derive_in
BeforePublish = Callable[[list[Segment]], None]  # given a refresh's new segments while only it sees them


class _Pieces:
    """The per-chunk arrays of a segment being written, gathered note by note, then joined."""

    NAMES = ("span", "lines", "heading", "row_len", "ids", "counts")

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.NAMES}

    def add(self, *arrays: np.ndarray) -> None:
        for name, arr in zip(self.NAMES, arrays):
            self.parts[name].append(arr)

    def take(self, name: str) -> list[np.ndarray]:
        """The gathered pieces of `name`, handed over (to be joined, or written one after another)."""
        return self.parts.pop(name)

    def join(self, name: str, dtype: Any, shape: tuple[int, ...] = (0,)) -> np.ndarray:
        """One array of the gathered pieces, joined in steps (which lets the GIL go between them)."""
        arrs = self.take(name)
        while len(arrs) > PIECES_PER_CONCAT:
            step = PIECES_PER_CONCAT
            arrs = [np.concatenate(arrs[i : i + step]) for i in range(0, len(arrs), step)]
        return np.concatenate(arrs).astype(dtype, copy=False) if arrs else np.zeros(shape, dtype)


def _add_reused(pieces: _Pieces, previous: ChunkTable, pi: int) -> None:
    """Note `pi` of `previous`, unchanged: its rows copied as they are."""
    fwd = previous.forward()
    rng = previous.chunks_of_note(pi)
    c0, c1 = rng.start, rng.stop
    p0, p1 = int(fwd.row_ptr[c0]), int(fwd.row_ptr[c1])
    pieces.add(
        np.asarray(previous.spans[c0:c1]),
        np.asarray(previous.lines[c0:c1]),
        np.asarray(previous.heading_ids[c0:c1]),
        np.diff(np.asarray(fwd.row_ptr[c0 : c1 + 1])),
        np.asarray(fwd.word_ids[p0:p1]),
        np.asarray(fwd.counts[p0:p1]),
    )


def _add_fresh(pieces: _Pieces, r: BatchResult, maps: tuple[np.ndarray, np.ndarray, np.ndarray], ni: int) -> None:
    """Note `ni` of batch `r`, just processed (`maps`: its heading ids, row and chunk pointers)."""
    hmap, row_ptr, chunk_ptr = maps
    c0, c1 = int(chunk_ptr[ni]), int(chunk_ptr[ni + 1])
    p0, p1 = int(row_ptr[c0]), int(row_ptr[c1])
    pieces.add(r.spans[c0:c1], r.lines[c0:c1], hmap[c0:c1], r.row_len[c0:c1], r.word_ids[p0:p1], r.counts[p0:p1])


def _renumbered(ids: np.ndarray, mapping: np.ndarray) -> np.ndarray:
    """`mapping[ids]`, written over `ids` when they are writable (a worker's, unpickled): the word ids
    stay where they were unpickled and each batch's temporary is reused by the next, where a new
    array per batch left the old ones' memory to the heap (interning took 78 MB, now 40 at scale)."""
    if not ids.flags.writeable:
        return mapping[ids]
    return np.take(mapping, ids, out=ids)


def write_segment(
    gen: Path,
    folder: Path,
    settings: IndexSettings,
    files: list[NoteFile],
    reuse: dict[str, int],
    previous: ChunkTable | None,
    results: list[BatchResult],
    skipped: list[Skipped],
    derive: Derive | None = None,
) -> dict[str, Any]:
    """Write reused notes (from `previous`, by `reuse`: path -> its note index) and freshly processed
    batches, in path order, into the folder `gen` as a complete segment; returns its manifest.
    `results` is consumed (emptied), so their memory goes as soon as it is written. `derive(gen)` is
    called once the forward index is on disk; what it returns is called before the manifest."""
    vocab: dict[str, int] = {}
    headings: dict[str, int] = {}
    if previous is not None:
        fwd = previous.forward()
        # Same ids as before, so the reused rows keep pointing at the right words and headings.
        vocab.update(zip(fwd.vocab, range(len(fwd.vocab))))
        headings.update(zip(previous.headings, range(len(previous.headings))))
    fresh: dict[str, tuple[int, int]] = {}  # where each new note lives: (batch, note index in it)
    batch_maps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for bi, r in enumerate(results):
        hmap = intern_words(headings, r.headings)
        r.word_ids = _renumbered(r.word_ids, intern_words(vocab, r.vocab.all()))  # in the index's word ids
        r.vocab, r.headings = Words(b""), []  # consumed: no longer held
        row_ptr = np.concatenate(([0], np.cumsum(r.row_len))).astype(np.int64)
        chunk_ptr = np.concatenate(([0], np.cumsum([n.n_chunks for n in r.notes]))).astype(np.int64)
        batch_maps.append((hmap, row_ptr, chunk_ptr))
        for ni, n in enumerate(r.notes):
            fresh[n.path] = (bi, ni)
    notes: list[NoteRecord] = []
    texts: list[Any] = []  # bytes or memory-mapped slices, written once at the end
    pieces = _Pieces()
    if not reuse:  # every note is fresh: the batches hold them in path order already, whole batches go
        for r, (hmap, _, _) in zip(results, batch_maps):
            notes += r.notes
            texts += r.texts
            pieces.add(r.spans, r.lines, hmap, r.row_len, r.word_ids, r.counts)
    for f in files if reuse else ():
        if f.path in reuse and previous is not None:
            pi = reuse[f.path]
            notes.append(previous.notes[pi])
            texts.append(previous.note_bytes(pi))
            _add_reused(pieces, previous, pi)
        elif f.path in fresh:
            bi, ni = fresh[f.path]
            notes.append(results[bi].notes[ni])
            texts.append(results[bi].texts[ni])
            _add_fresh(pieces, results[bi], batch_maps[bi], ni)
    results.clear()  # consumed: what is left of them is in `pieces`, and goes as those are written
    release_freed_memory()  # the batches' word lists and word ids, interned
    note_off = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)
    row_len = pieces.join("row_len", np.int64)
    arrays = {
        "note_off": note_off,
        "chunk_note": np.repeat(np.arange(len(notes), dtype=np.int32), [n.n_chunks for n in notes]),
        "chunk_span": pieces.join("span", np.int32, (0, 2)),
        "chunk_lines": pieces.join("lines", np.int32, (0, 2)),
        "chunk_heading": pieces.join("heading", np.int32),
        "fwd_ptr": np.concatenate(([0], np.cumsum(row_len))).astype(np.int64),
        # size and mtime per note, so a refresh finds what changed without parsing every record
        "note_size": np.array([n.size for n in notes], np.int64),
        "note_mtime": np.array([n.mtime_ns for n in notes], np.int64),
    }
    files_info = fileio.write_arrays(
        gen, arrays, {"vocab": "\n".join(vocab).encode("utf-8"), "headings": "\n".join(headings).encode("utf-8")}
    )
    # the forward index's word ids and counts (one per distinct word of a chunk: 10 million at the
    # scale corpus) go to disk piece by piece: joined first, each would be in memory twice
    ids, counts = pieces.take("ids"), pieces.take("counts")
    tokens = sum(int(c.sum()) for c in counts)
    files_info["fwd_ids.npy"] = fileio.write_pieces(gen / "fwd_ids.npy", ids, np.int32)
    files_info["fwd_counts.npy"] = fileio.write_pieces(gen / "fwd_counts.npy", counts, np.int32)
    counts_info = {"files": len(notes), "chunks": int(len(arrays["chunk_note"])), "tokens": tokens}
    del arrays, row_len, ids, counts  # on disk now: not held while the derivation runs
    vocab.clear()  # and the words (270,000 strs at the scale corpus), written as the blob
    headings.clear()
    batch_maps.clear()
    if derive is not None:
        release_freed_memory()  # the workers' derivation, starting now, is the build's peak
    derived = derive(gen) if derive is not None else None
    files_info["notes.npy"] = fileio.write_pieces(gen / "notes.npy", texts, np.uint8)
    files_info["notes.jsonl"] = fileio.write_jsonl(gen / "notes.jsonl", [vars(n) for n in notes])
    paths = json.dumps([n.path for n in notes], ensure_ascii=True).encode("ascii")  # \n, \udcff and all
    files_info["paths.blob"] = fileio.write_blob(gen / "paths.blob", paths)
    files_info["skipped.jsonl"] = fileio.write_jsonl(gen / "skipped.jsonl", [vars(s) for s in skipped])
    del texts  # the note texts, on disk now
    if derived is not None:
        release_freed_memory()  # and the note texts, written
        derived()
    return write_manifest(gen, folder, settings, counts_info, files_info)


def write_manifest(
    gen: Path,
    folder: Path,
    settings: IndexSettings,
    counts: dict[str, int],
    files: dict[str, dict[str, int]],
    base: str | None = None,
) -> dict[str, Any]:
    """Write a generation's manifest (last, so a generation without one is incomplete)."""
    manifest: dict[str, Any] = {
        "format": store.FORMAT_VERSION,
        "index_id": store.index_id(gen.parent),  # the id its folder's marker and generations' markers hold
        "folder": str(folder),
        "built_at": time.time(),
        "settings": settings.to_json(),
        "counts": counts,
        "files": files,
    }
    if base is not None:
        manifest["base"] = base  # a delta generation: its notes on top of this full one
    fileio.write_json(gen / store.MANIFEST, manifest)
    return manifest


@dataclass(frozen=True)
class Published:
    """A generation the writer published, with its segments as written: the build opens its reader
    on them (core.reader) without reading the manifest back or mapping the base again."""

    generation: Path
    manifest: dict[str, Any]
    segments: list[Segment]


def write_full(
    folder: Path,
    root: Path,
    settings: IndexSettings,
    files: list[NoteFile],
    reuse: dict[str, int],
    previous: ChunkTable | None,
    results: list[BatchResult],
    skipped: list[Skipped],
    derive: Derive | None = None,
    before_publish: BeforePublish | None = None,
) -> Published:
    """Publish a new full generation (a new base): every note, reused or fresh, in one segment."""
    gen = store.new_generation(root)
    try:
        manifest = write_segment(gen, folder, settings, files, reuse, previous, results, skipped, derive)
        segment = Segment(gen, manifest)
        if before_publish is not None:
            before_publish([segment])
        store.publish(root, gen)
    except BaseException:
        fileio.discard(gen)
        raise
    return Published(gen, manifest, [segment])


@dataclass
class DeltaPlan:
    """How a refresh splits the notes: kept from the base, or (re)written in the delta segment."""

    base: Segment
    previous_delta: Segment | None  # the delta of the index being refreshed, if it has one
    paths: list[str]  # every note the walk found, in path order
    base_rows: np.ndarray  # per path: its note index in the base when kept from there, else -1
    from_delta: dict[str, int]  # path -> note index in the previous delta segment
    delta_files: list[NoteFile]  # the notes not kept from the base, in path order


def write_delta(
    folder: Path,
    root: Path,
    settings: IndexSettings,
    plan: DeltaPlan,
    results: list[BatchResult],
    skipped: list[Skipped],
    before_publish: BeforePublish | None = None,
) -> Published:
    """Publish a new generation that keeps the base as it is and writes only the delta segment: the
    changed and new notes (and those changed since the base), plus the merged note order."""
    base = plan.base
    gen = store.new_generation(root)
    try:
        delta_dir = gen / "delta"
        delta_dir.mkdir()
        # The segment's own skipped list stays empty: the generation's list (below) is the one read.
        dman = write_segment(
            delta_dir, folder, settings, plan.delta_files, plan.from_delta, plan.previous_delta, results, []
        )
        delta = Segment(delta_dir, dman)
        src = _merged_order(plan, delta)
        kept = np.zeros(len(base.note_paths), bool)
        kept[plan.base_rows[plan.base_rows >= 0]] = True
        dead_rows = np.flatnonzero(~kept[np.asarray(base.chunk_note)])
        fwd = base.forward()
        ptr = np.asarray(fwd.row_ptr)
        dead_tokens = int(np.asarray(fwd.counts)[ranges(ptr[dead_rows], np.diff(ptr)[dead_rows])].sum())
        files_info = fileio.write_arrays(gen, {"note_src": src}, {})
        files_info["skipped.jsonl"] = fileio.write_jsonl(gen / "skipped.jsonl", [vars(s) for s in skipped])
        counts = {
            "files": len(src),
            "chunks": base.n_chunks - len(dead_rows) + delta.n_chunks,
            "tokens": base.n_tokens - dead_tokens + delta.n_tokens,
        }
        manifest = write_manifest(gen, folder, settings, counts, files_info, base=base.generation.name)
        if before_publish is not None:
            before_publish([delta])
        store.publish(root, gen, also_keep=base.generation)
    except BaseException:
        fileio.discard(gen)
        raise
    return Published(gen, manifest, [base, delta])


def _merged_order(plan: DeltaPlan, delta: Segment) -> np.ndarray:
    """Each indexed note in path order as its base note index, or -1 - its index in the delta (a
    note the walk found that could not be read is in neither)."""
    in_delta = {p: j for j, p in enumerate(delta.note_paths)}
    src = plan.base_rows.copy()
    live = src >= 0
    for i in np.flatnonzero(~live).tolist():
        j = in_delta.get(plan.paths[i])
        if j is not None:
            src[i], live[i] = -1 - j, True
    return src[live].astype(np.int32)
