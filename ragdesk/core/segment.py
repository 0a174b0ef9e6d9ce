"""One segment: a generation folder as a build wrote it (its per-note and per-chunk arrays, note
table, note texts, forward index) and the analyzer indexes derived from it on first use.

`ChunkTable` is what a segment and an index reader (one or more segments in merged numbering)
have in common: chunks and notes by number, and their texts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np

from . import fileio, kernels, store
from .analyzers import Analyzer, AnalyzerConfig
from .bm25 import DEFAULT_B, DEFAULT_K1
from .chunking import CONTEXT_SEP, Chunk, context_parts, note_title
from .derive import derive_term_index
from .lexicon import Lexicon, Words, sorted_ids
from .nearest import NearestRows
from .note_records import LazyNotes
from .orphans import worker_pool
from .params import IndexSettings
from .pdf import PDF_SUFFIX, page_of
from .postings import ForwardIndex, TermIndex
from .tokenize import NoteRecord

# Analyzer indexes of a forward index with at least this many postings are derived side by side in
# worker processes (below that, starting the workers costs more than it saves).
PARALLEL_DERIVE_POSTINGS = 2_000_000


class ChunkTable:
    """Chunks and notes in one numbering, read from per-chunk arrays; subclasses provide them."""

    settings: IndexSettings
    note_paths: list[str]
    notes: Sequence[NoteRecord]
    chunk_note: np.ndarray  # note index per chunk, ascending
    spans: np.ndarray  # (start, end) character span per chunk in its note's text
    lines: np.ndarray  # (first, last) line per chunk
    heading_ids: np.ndarray  # index into `headings` per chunk
    headings: list[str]
    note_first_chunk: np.ndarray  # first chunk of each note, plus the chunk count at the end

    def note_bytes(self, note_idx: int) -> Any:
        raise NotImplementedError

    def forward(self) -> ForwardIndex:
        raise NotImplementedError

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_note)

    def note_text(self, note_idx: int) -> str:
        return bytes(self.note_bytes(note_idx)).decode("utf-8")

    def chunks_of_note(self, note_idx: int) -> range:
        return range(int(self.note_first_chunk[note_idx]), int(self.note_first_chunk[note_idx + 1]))

    def note_slice(self, note_idx: int, start: int, end: int) -> str:
        """Characters start..end of a note's text, decoding only those (a hit's text: 10 us less
        per hit than decoding a 15 KB note whole)."""
        if kernels.TEXT is not None:
            return kernels.TEXT.utf8_slice(self.note_bytes(note_idx), start, end)
        return self.note_text(note_idx)[start:end]

    def chunk(self, chunk_id: int) -> Chunk:
        note_idx = int(self.chunk_note[chunk_id])
        start, end = self.spans[chunk_id].tolist()
        first, last = self.lines[chunk_id].tolist()
        path = self.note_paths[note_idx]
        page = page_of(self.notes[note_idx].meta, start) if path.lower().endswith(PDF_SUFFIX) else None
        return Chunk(
            path=path,
            heading=self.headings[int(self.heading_ids[chunk_id])],
            start_line=first,
            end_line=last,
            start=start,
            end=end,
            text=self.note_slice(note_idx, start, end),
            page=page,
        )

    def text_before(self, chunk_id: int, limit: int = 20_000) -> str:
        """Up to `limit` characters of the chunk's note just before it (what decides whether a table's
        row or a line under a heading is a secret: secret_layout.note_context)."""
        note_idx = int(self.chunk_note[chunk_id])
        start = int(self.spans[chunk_id][0])
        return self.note_slice(note_idx, max(0, start - limit), start) if start else ""

    def chunk_context(self, chunk_id: int) -> str:
        """Text indexed with the chunk besides its own (title and headings), or "" when context is off."""
        return CONTEXT_SEP.join(self.chunk_context_parts(chunk_id))

    def chunk_context_parts(self, chunk_id: int) -> list[str]:
        """The chunk's context as shown to a person: title, then headings; [] when context is off."""
        if not self.settings.chunk.indexes_context:
            return []
        note = self.notes[int(self.chunk_note[chunk_id])]
        heading = self.headings[int(self.heading_ids[chunk_id])]
        return context_parts(note_title(note.meta, note.path), heading)

    def chunk_texts(self, chunk_ids: Sequence[int] | None = None) -> list[str]:
        """The indexed text (context, then text) of the given chunks (all by default), in order;
        each note involved is decoded once."""
        ids = range(self.n_chunks) if chunk_ids is None else chunk_ids
        out = []
        decoded: tuple[int, str] = (-1, "")
        for c in ids:
            note_idx = int(self.chunk_note[c])
            if decoded[0] != note_idx:
                decoded = (note_idx, self.note_text(note_idx))
            start, end = (int(x) for x in self.spans[c])
            context = self.chunk_context(c)
            out.append(f"{context}\n{decoded[1][start:end]}" if context else decoded[1][start:end])
        return out


class Segment(ChunkTable):
    """One generation folder (a full build, or the delta of a refresh), memory-mapped."""

    def __init__(self, generation: Path, manifest: dict[str, Any]) -> None:
        g = self.generation = generation
        self.manifest = manifest
        self.settings = IndexSettings.from_json(manifest["settings"])
        self.n_tokens: int = manifest["counts"]["tokens"]
        self.note_paths = _load_paths(g, manifest)
        self.notes = LazyNotes(g / "notes.jsonl", len(self.note_paths))
        self.note_off = fileio.load_array(g, "note_off")
        self.chunk_note = fileio.load_array(g, "chunk_note")
        self.spans = fileio.load_array(g, "chunk_span")
        self.lines = fileio.load_array(g, "chunk_lines")
        self.heading_ids = fileio.load_array(g, "chunk_heading")
        self.note_size, self.note_mtime = fileio.load_array(g, "note_size"), fileio.load_array(g, "note_mtime")
        self.headings = fileio.load_blob(g, "headings").decode("utf-8").split("\n")
        self._blob = fileio.load_array(g, "notes")  # the note texts, one UTF-8 byte array
        self._check_structure()
        # chunk_note is sorted, so each note's first chunk is a binary search away
        self.note_first_chunk = np.searchsorted(self.chunk_note, np.arange(len(self.note_paths) + 1))
        self._forward: ForwardIndex | None = None
        self._terms: dict[str, TermIndex] = {}
        self._heading_index: dict[str, int] | None = None
        # per model, the meaning index quantized for search: kept with the segment, which a refresh's
        # reader reuses, so a refresh quantizes only its delta (see IndexReader.nearest)
        self.nearest_rows: dict[str, NearestRows] = {}

    def heading_index(self) -> dict[str, int]:
        """Heading -> its id, built once (10 ms for the scale corpus's 47,000 headings): every reader
        of a delta over this base interns the delta's headings into a copy."""
        if self._heading_index is None:
            self._heading_index = dict(zip(self.headings, range(len(self.headings))))
        return self._heading_index

    @classmethod
    def open(cls, generation: Path, verify: bool = False) -> Segment:
        """Open a generation folder that holds a segment (store.IndexDamaged when it is damaged;
        `verify`: check every file's checksum, derived analyzer indexes included)."""
        manifest = store.read_manifest(generation)
        fileio.check_files(generation, manifest["files"], verify_crc=verify)
        if verify:  # the derived analyzer indexes too: a search reads them, not the files above
            for sub in sorted(generation.glob("terms-*")):
                fileio.check_files(sub, store.read_manifest(sub).get("files", {}), verify_crc=True)
        return cls(generation, manifest)

    def _check_structure(self) -> None:
        """Cheap checks on open that altered bytes would break (IndexDamaged): pointers ascending and
        in bounds, ids in range, one row per chunk in every per-chunk array."""
        g, need = self.generation, store.require
        n_notes, n_chunks = len(self.note_paths), len(self.chunk_note)
        need(n_chunks == self.manifest["counts"]["chunks"], g, "chunk count")
        need(store.ascending(self.note_off, 0, len(self._blob)) and len(self.note_off) == n_notes + 1, g, "note_off")
        need(store.ascending(self.chunk_note), g, "chunk_note is not sorted")
        need(not n_chunks or 0 <= int(self.chunk_note[0]) <= int(self.chunk_note[-1]) < n_notes, g, "chunk_note range")
        for name, arr in (("chunk_span", self.spans), ("chunk_lines", self.lines)):
            need(arr.shape == (n_chunks, 2), g, f"{name} shape")
            need(not n_chunks or (arr[:, 0].min() >= 0 and np.all(arr[:, 1] >= arr[:, 0])), g, f"{name} values")
        need(len(self.heading_ids) == n_chunks, g, "chunk_heading length")
        need(not n_chunks or 0 <= self.heading_ids.min() <= self.heading_ids.max() < len(self.headings), g, "headings")
        need(len(self.note_size) == len(self.note_mtime) == n_notes, g, "note_size/note_mtime length")

    def note_bytes(self, note_idx: int) -> Any:
        """The note's stored UTF-8 text (a memory-mapped slice, not a copy)."""
        return self._blob[int(self.note_off[note_idx]) : int(self.note_off[note_idx + 1])]

    def release_texts(self) -> None:
        """Let the note texts read so far leave this process's resident memory (see fileio.release_pages)."""
        fileio.release_pages(self._blob)

    def forward(self) -> ForwardIndex:
        if self._forward is None:
            self._forward = load_forward(self.generation)
        return self._forward

    def term_index(self, config: AnalyzerConfig) -> TermIndex:
        """A single analyzer's index: from memory, from disk, or derived (and stored) on first use;
        a damaged stored one is derived again and replaced."""
        key = config.key
        if key in self._terms:
            return self._terms[key]
        sub = self.generation / f"terms-{key}"
        ti: TermIndex | None = None
        damaged = False
        if sub.is_dir():
            try:
                ti = load_term_index(sub, self.n_chunks)
            except store.IndexDamaged:
                ti, damaged = None, True
        if ti is None:
            ti = derive_term_index(self.forward(), Analyzer(config))
            publish_term_index(self.generation, key, lambda d: save_term_index(d, ti), replace=damaged)
        self._terms[key] = ti
        return ti

    def ready(self, config: AnalyzerConfig) -> bool:
        """Whether `config`'s indexes are loaded or stored, or cheap to derive here (a small segment)."""
        return not self._missing(config) or not self._large()

    def _missing(self, config: AnalyzerConfig) -> list[AnalyzerConfig]:
        """The single-index parts of `config` neither loaded nor stored."""
        return [
            cfg
            for cfg, _ in config.parts()
            if cfg.key not in self._terms and not (self.generation / f"terms-{cfg.key}").is_dir()
        ]

    def _large(self) -> bool:
        """Large enough that deriving an index belongs in worker processes."""
        return len(self.forward().word_ids) >= PARALLEL_DERIVE_POSTINGS

    def warm(self, config: AnalyzerConfig, workers: int | None = None, apart: bool = False) -> None:
        """Load or derive every index `config` needs. On a large segment, missing indexes are derived
        side by side in worker processes that read the forward index from disk and publish their
        result; this process then maps them. With `apart` even a single one is (the window: deriving
        the words index of 31,000 notes in its own process held the GIL, and the GUI, for 250 ms+)."""
        missing = self._missing(config)
        n_workers = min(len(missing), workers if workers is not None else (os.cpu_count() or 1))
        if missing and (n_workers > 1 or apart) and self._large():
            try:
                with worker_pool(n_workers) as pool:
                    for fut in [pool.submit(derive_and_publish, str(self.generation), cfg) for cfg in missing]:
                        fut.result()
            except (BrokenProcessPool, OSError):
                pass  # derive here instead, below
        for cfg, _ in config.parts():
            self.term_index(cfg)


def _load_paths(generation: Path, manifest: dict[str, Any]) -> list[str]:
    """The notes' relative paths, a JSON list (any character a file name can hold, a newline or an
    undecodable byte kept as an escaped surrogate, round-trips), checked against the note count."""
    try:
        paths = json.loads(fileio.load_blob(generation, "paths"))
    except ValueError as exc:
        raise store.IndexDamaged(f"damaged note paths in {generation}: {exc}") from exc
    expected = manifest.get("counts", {}).get("files")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or len(paths) != expected:
        raise store.IndexDamaged(f"note paths in {generation} do not match its {expected} notes")
    return paths


def load_forward(generation: Path) -> ForwardIndex:
    """A segment's forward index (chunk -> words with counts), memory-mapped and checked."""
    fwd = ForwardIndex(
        Words(fileio.load_blob(generation, "vocab")),
        fileio.load_array(generation, "fwd_ptr"),
        fileio.load_array(generation, "fwd_ids"),
        fileio.load_array(generation, "fwd_counts"),
    )
    store.require(
        store.ascending(fwd.row_ptr, 0, len(fwd.word_ids)) and len(fwd.counts) == len(fwd.word_ids),
        generation,
        "forward index pointers",
    )
    return fwd


# ---- derived analyzer indexes on disk ------------------------------------------------------------
def publish_term_index(generation: Path, key: str, write: Callable[[Path], None], replace: bool = False) -> None:
    """Publish an analyzer's index folder, written by `write` into a temporary folder (`replace`:
    the folder there is damaged and goes)."""
    try:
        store.publish_subdir(generation, f"terms-{key}", write, replace=replace)
    except OSError:
        pass  # a read-only cache still searches, it just derives again next time


def derive_and_publish(generation: str, config: AnalyzerConfig) -> None:
    """Worker process: derive one analyzer's index from the stored forward index and publish it
    (the compiled derivation writes its postings straight into the files being published)."""
    gen = Path(generation)
    forward = load_forward(gen)

    def write(folder: Path) -> None:
        ti = derive_term_index(forward, Analyzer(config), out_dir=folder)
        save_term_index(folder, ti)
        del ti  # unmap its files before the folder is renamed into place

    publish_term_index(gen, config.key, write)


def save_term_index(folder: Path, ti: TermIndex) -> None:
    arrays = {
        "indptr": ti.indptr,
        "docs": ti.docs,
        "tfs": ti.tfs,
        "doc_len": ti.doc_len,
        # score bounds for the default k1 and b, so a reopened index prunes from the first query
        "bounds": ti.max_tf_weights(DEFAULT_K1, DEFAULT_B),
        "order": ti.terms.order() if isinstance(ti.terms, Lexicon) else sorted_ids(ti.terms),  # for look-ups
    }
    in_place = {name for name in arrays if (folder / f"{name}.npy").exists()}  # written by the derivation
    files = fileio.write_arrays(
        folder,
        {name: arr for name, arr in arrays.items() if name not in in_place},
        {"terms": "\n".join(ti.terms).encode("utf-8")},
    )
    files.update({f"{name}.npy": fileio.file_info(folder / f"{name}.npy") for name in in_place})
    fileio.write_json(folder / store.MANIFEST, {"format": store.FORMAT_VERSION, "files": files})


def load_term_index(folder: Path, n_chunks: int) -> TermIndex:
    manifest = store.read_manifest(folder)
    fileio.check_files(folder, manifest["files"])  # the small arrays (lengths, bounds, pointers) by checksum
    # an index written before the sorted order was stored sorts its terms on first look-up
    order = fileio.load_array(folder, "order") if "order.npy" in manifest["files"] else None
    ti = TermIndex(
        Lexicon(fileio.load_blob(folder, "terms"), order),
        fileio.load_array(folder, "indptr"),
        fileio.load_array(folder, "docs"),
        fileio.load_array(folder, "tfs"),
        fileio.load_array(folder, "doc_len"),
    )
    bounds = fileio.load_array(folder, "bounds")
    need = store.require
    need(store.ascending(ti.indptr, 0, len(ti.docs)) and len(ti.tfs) == len(ti.docs), folder, "posting pointers")
    need(len(ti.indptr) == len(ti.terms) + 1 and len(bounds) == len(ti.terms), folder, "one row per term")
    need(order is None or (len(order) == len(ti.terms) and _within(order, len(ti.terms))), folder, "term order")
    need(len(ti.doc_len) == n_chunks and (not n_chunks or ti.doc_len.min() >= 0), folder, "chunk lengths")
    ti.seed_bounds(DEFAULT_K1, DEFAULT_B, bounds)
    return ti


def _within(ids: np.ndarray, n: int) -> bool:
    """Every id in 0..n-1 (an empty array too)."""
    return not len(ids) or (int(ids.min()) >= 0 and int(ids.max()) < n)
