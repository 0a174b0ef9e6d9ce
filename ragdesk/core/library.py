"""A notes folder's index: build (incrementally, in parallel), open from disk, search, explain.

This is the single source of truth for the CLI and the window: ranks, scores, per-term
breakdowns and chunk texts all come from a `Library`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from . import store
from .analyzers import Analyzer, AnalyzerConfig
from .arrays import ranges
from .bm25 import DEFAULT_B, DEFAULT_K1
from .chunking import Chunk, ChunkOptions, context_text, note_title
from .dense import (
    FUSION_DEPTH,
    MODES,
    DenseUnavailable,
    Embedder,
    Fusion,
    WordLlamaEmbedder,
    dense_top_k,
    rrf_fuse,
)
from .explain import TermRow, term_rows
from .index import (
    ForwardIndex,
    MergedTermIndex,
    QueryTermRef,
    TermIndex,
    _segment_sums,
    derive_term_index,
    score_all,
    search_top_k,
    terms_of_rows,
)
from .loader import LoadOptions, NoteFile, Skipped, walk_notes
from .orphans import worker_pool
from .paths import shown
from .pdf import PDF_SUFFIX, page_of
from .tokenize import BatchResult, NoteRecord, intern_words, process_batch

ProgressFn = Callable[[int, int, int, str], None]  # files done, files total, chunks so far, current file
CancelFn = Callable[[], bool]

PARALLEL_MIN_BYTES = 4 * 1024 * 1024
PARALLEL_DERIVE_POSTINGS = 2_000_000
BATCH_BYTES = 1024 * 1024
BATCH_FILES = 400
# A refresh writes only a delta segment on top of the last full build while the changed notes stay
# this small a share of the folder (and this few); beyond that it merges everything into a new base.
DELTA_MAX_SHARE = 0.05
DELTA_MAX_NOTES = 2000


class BuildCancelled(Exception):
    """The build was cancelled; the previous index (if any) is untouched."""


@dataclass(frozen=True)
class IndexSettings:
    """Everything that decides which chunks exist (analyzers are chosen per query)."""

    load: LoadOptions = field(default_factory=LoadOptions)
    chunk: ChunkOptions = field(default_factory=ChunkOptions)

    def to_json(self) -> dict[str, Any]:
        return {"load": asdict(self.load), "chunk": asdict(self.chunk)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexSettings:
        load = dict(data.get("load", {}))
        for key in ("extensions", "ignore"):
            if key in load:
                load[key] = tuple(load[key])
        return cls(LoadOptions(**load), ChunkOptions(**data.get("chunk", {})))


@dataclass
class BuildReport:
    """What a build or refresh did, for the CLI's JSON and the status bar."""

    files: int = 0
    chunks: int = 0
    tokens: int = 0
    elapsed_s: float = 0.0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    rebuilt: bool = True  # False when the stored index was already current
    skipped: list[Skipped] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = [{"path": shown(s.path), "reason": s.reason, "loaded": s.loaded} for s in self.skipped]
        return d


@dataclass
class Hit:
    """One ranked chunk with everything needed to show and explain it."""

    rank: int
    score: float
    chunk_id: int
    path: str
    heading: str
    start_line: int
    end_line: int
    length: int
    text: str
    explain: list[TermRow]
    fusion: Fusion | None = None  # dense and hybrid modes: how the rank came about
    span: tuple[int, int] = (0, 0)  # character span in the note's text
    page: int | None = None  # 1-based page of a PDF's chunk (where it starts); None for other notes

    @property
    def key(self) -> tuple[str, int, int]:
        """Which passage this is, across refreshes (chunk ids are only valid within one index)."""
        return (self.path, *self.span)

    @property
    def location(self) -> str:
        """Where in the note, as a person cites it: a PDF's page, else the lines."""
        return f"p. {self.page}" if self.page is not None else f"lines {self.start_line}–{self.end_line}"

    @property
    def shown_path(self) -> str:
        """`path` as a person sees it (see paths.shown); `path` itself opens the file."""
        return shown(self.path)

    def to_json(self, with_explain: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "rank": self.rank,
            "score": self.score,
            "path": self.shown_path,
            "chunk_id": self.chunk_id,
            "heading": shown(self.heading),
            "page": self.page,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "length": self.length,
            "text": self.text,
        }
        if with_explain:
            d["explain"] = [r.to_json() for r in self.explain]
        if self.fusion is not None:
            d["fusion"] = self.fusion.to_json()
        return d


@dataclass
class QueryTerm:
    term: str
    words: tuple[str, ...]
    n_t: int


@dataclass
class SearchResult:
    """A ranking plus its context (statistics, timing, and why it may be empty or partial)."""

    query: str
    analyzer: str
    k1: float
    b: float
    n_docs: int
    avgdl: float
    took_ms: float
    hits: list[Hit]
    terms: list[QueryTerm]
    reason: str | None = None
    mode: str = "bm25"

    def to_json(self, with_explain: bool = True) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "analyzer": self.analyzer,
            "k1": self.k1,
            "b": self.b,
            "N": self.n_docs,
            "avgdl": self.avgdl,
            "took_ms": self.took_ms,
            "reason": self.reason,
            "terms": [{"term": t.term, "words": list(t.words), "n_t": t.n_t} for t in self.terms],
            "hits": [h.to_json(with_explain) for h in self.hits],
        }


class Library:
    """An opened (memory-mapped) index of one notes folder."""

    def __init__(self, folder: Path, root: Path, generation: Path, manifest: dict[str, Any]) -> None:
        self.folder = folder
        self.root = root
        self.generation = generation
        self.manifest = manifest
        self.settings = IndexSettings.from_json(manifest["settings"])
        self.note_paths: list[str] = _load_paths(generation, manifest)
        self.notes = _LazyNotes(generation / "notes.jsonl", len(self.note_paths))
        self.skipped = [Skipped(**s) for s in store.read_jsonl(generation / "skipped.jsonl")]
        self.built_at: float = manifest["built_at"]
        self.n_tokens: int = manifest["counts"]["tokens"]
        g = generation
        self.note_off = store.load_array(g, "note_off")
        self.chunk_note = store.load_array(g, "chunk_note")
        self.spans = store.load_array(g, "chunk_span")
        self.lines = store.load_array(g, "chunk_lines")
        self.heading_ids = store.load_array(g, "chunk_heading")
        self.note_size, self.note_mtime = store.load_array(g, "note_size"), store.load_array(g, "note_mtime")
        self.headings = store.load_blob(g, "headings").decode("utf-8").split("\n")
        self._blob = store.load_array(g, "notes")  # the note texts, one UTF-8 byte array
        self._forward: ForwardIndex | None = None
        self._terms: dict[str, TermIndex | MergedTermIndex] = {}
        self._analyzers: dict[str, Analyzer] = {}
        self._check_structure()
        # chunk_note is sorted, so each note's first chunk is a binary search away
        self._note_first_chunk = np.searchsorted(self.chunk_note, np.arange(len(self.note_paths) + 1))
        # A refreshed index is a base (the last full build) plus a delta segment; see _compose.
        self.base: Library | None = None
        self.delta: Library | None = None
        self._note_src: np.ndarray | None = None
        self._base_remap = self._delta_remap = np.zeros(0, np.int32)  # segment chunk -> merged id (-1: gone)
        self._dense: dict[str, np.ndarray] = {}  # a composed index's embeddings, laid out once
        self._path_index: dict[str, int] | None = None  # note path -> note index, built on first use

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

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        folder: str | os.PathLike[str],
        index_dir: str | os.PathLike[str] | None = None,
        verify: bool = False,
        reuse: Library | None = None,
    ) -> Library:
        """Open the stored index of `folder`; raises store.IndexDamaged when it must be rebuilt.

        `reuse`: an index opened earlier (e.g. before a refresh); when the stored one is a delta
        over the same base, that base is shared, with everything it has loaded and derived.
        """
        folder_path = Path(folder).resolve()
        root = store.index_dir_for(folder_path, index_dir)
        gen = store.current_generation(root)
        if gen is None:
            raise store.IndexMissing(f"no index yet for {folder_path}")
        store.remove_stale_temporaries(root)
        library = cls._open_generation(folder_path, root, gen, verify, reuse)
        if library.manifest.get("folder") != str(folder_path):  # an --index-dir shared by two folders
            raise store.IndexMissing(f"the index in {root} is of another folder ({library.manifest.get('folder')})")
        return library

    @classmethod
    def _open_generation(
        cls, folder: Path, root: Path, gen: Path, verify: bool = False, reuse: Library | None = None
    ) -> Library:
        manifest = store.read_manifest(gen)
        store.check_files(gen, manifest["files"], verify_crc=verify)
        if verify:  # the derived analyzer indexes too: a search reads them, not the files above
            for sub in sorted(gen.glob("terms-*")):
                store.check_files(sub, store.read_manifest(sub).get("files", {}), verify_crc=True)
        try:
            if "base" not in manifest:
                return cls(folder, root, gen, manifest)
            known = reuse.base if reuse is not None and reuse.base is not None else reuse
            if known is not None and known.root == root and known.generation.name == manifest["base"] and not verify:
                base = known
            else:
                base = cls._open_generation(folder, root, root / manifest["base"], verify)
            delta = cls._open_generation(folder, root, gen / "delta", verify)
            return cls._compose(folder, root, gen, manifest, base, delta)
        except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError) as exc:
            raise store.IndexDamaged(f"damaged index in {gen}: {exc!r}") from exc

    @classmethod
    def _compose(
        cls, folder: Path, root: Path, gen: Path, manifest: dict[str, Any], base: Library, delta: Library
    ) -> Library:
        """The base minus its dead notes plus the delta's notes, numbered as a full rebuild would.

        `note_src` lists the notes in order: a base note index, or -1 - (delta note index).
        Everything per chunk is laid out in that order once, here; postings are mapped per query
        (see MergedTermIndex), so opening costs a few array operations, not a rebuild.
        """
        lib = cls.__new__(cls)
        lib.folder, lib.root, lib.generation, lib.manifest = folder, root, gen, manifest
        lib.settings = IndexSettings.from_json(manifest["settings"])
        lib.base, lib.delta = base, delta
        src = np.asarray(store.load_array(gen, "note_src"), dtype=np.int64)
        from_base = src >= 0
        b_first, d_first = base._note_first_chunk, delta._note_first_chunk
        b_idx, d_idx = np.where(from_base, src, 0), np.where(from_base, 0, -1 - src)

        def per_note(b_values: np.ndarray, d_values: np.ndarray) -> np.ndarray:
            """A per-note array in the merged order, from the two segments' arrays."""
            out = np.zeros(len(src), np.int64)
            out[from_base] = np.asarray(b_values)[b_idx[from_base]]
            out[~from_base] = np.asarray(d_values)[d_idx[~from_base]]
            return out

        counts = per_note(np.diff(b_first), np.diff(d_first))
        first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

        def remap(seg: Library, notes: np.ndarray, seg_first: np.ndarray, mask: np.ndarray) -> np.ndarray:
            offset = np.zeros(len(seg.note_paths), np.int64)
            alive = np.zeros(len(seg.note_paths), bool)
            offset[notes[mask]] = first[:-1][mask] - seg_first[notes[mask]]
            alive[notes[mask]] = True
            owner = np.asarray(seg.chunk_note)
            return np.where(alive[owner], np.arange(len(owner)) + offset[owner], -1).astype(np.int32)

        lib._base_remap = remap(base, b_idx, b_first, from_base)
        lib._delta_remap = remap(delta, d_idx, d_first, ~from_base)
        lib.chunk_note = np.repeat(np.arange(len(src), dtype=np.int32), counts)
        lib.spans = lib._merge_rows(np.asarray(base.spans), np.asarray(delta.spans))
        lib.lines = lib._merge_rows(np.asarray(base.lines), np.asarray(delta.lines))
        headings = dict(zip(base.headings, range(len(base.headings))))  # one id per distinct heading
        delta_heading = intern_words(headings, delta.headings)
        delta_ids = delta_heading[np.asarray(delta.heading_ids)] if len(delta_heading) else np.zeros(0, np.int32)
        lib.heading_ids = lib._merge_rows(np.asarray(base.heading_ids), delta_ids)
        lib.headings = list(headings)
        lib.note_size = per_note(base.note_size, delta.note_size)
        lib.note_mtime = per_note(base.note_mtime, delta.note_mtime)
        lib.note_paths = [base.note_paths[i] if i >= 0 else delta.note_paths[-1 - i] for i in src.tolist()]
        lib.notes = _ComposedNotes(base.notes, delta.notes, src)
        lib.skipped = [Skipped(**s) for s in store.read_jsonl(gen / "skipped.jsonl")]
        lib.built_at, lib.n_tokens = manifest["built_at"], manifest["counts"]["tokens"]
        lib._forward, lib._terms, lib._analyzers, lib._dense = None, {}, {}, {}
        lib._note_first_chunk, lib._note_src = first, src
        lib._path_index = None
        return lib

    # ---- chunks and notes ----------------------------------------------------------------
    @property
    def n_chunks(self) -> int:
        return len(self.chunk_note)

    def _segment_of(self, note_idx: int) -> tuple[Library, int]:
        """Which segment holds a note of a composed index, and its index there."""
        assert self.base is not None and self.delta is not None and self._note_src is not None
        s = int(self._note_src[note_idx])
        return (self.base, s) if s >= 0 else (self.delta, -1 - s)

    def note_bytes(self, note_idx: int) -> Any:
        """The note's stored UTF-8 text (a memory-mapped slice, not a copy)."""
        if self._note_src is not None:
            seg, i = self._segment_of(note_idx)
            return seg.note_bytes(i)
        return self._blob[int(self.note_off[note_idx]) : int(self.note_off[note_idx + 1])]

    def note_text(self, note_idx: int) -> str:
        return bytes(self.note_bytes(note_idx)).decode("utf-8")

    def chunk(self, chunk_id: int) -> Chunk:
        note_idx = int(self.chunk_note[chunk_id])
        start, end = (int(x) for x in self.spans[chunk_id])
        first, last = (int(x) for x in self.lines[chunk_id])
        path = self.note_paths[note_idx]
        page = page_of(self.notes[note_idx].meta, start) if path.lower().endswith(PDF_SUFFIX) else None
        return Chunk(
            path=path,
            heading=self.headings[int(self.heading_ids[chunk_id])],
            start_line=first,
            end_line=last,
            start=start,
            end=end,
            text=self.note_text(note_idx)[start:end],
            page=page,
        )

    def report(self) -> list[dict[str, Any]]:
        """Every file the folder's walk found, with its status: indexed (chunks, tokens, pages, when it
        was read), decoded with a fallback (and why), or skipped (and why); in path order."""
        fwd = self.forward()
        per_chunk = _segment_sums(np.asarray(fwd.counts), np.asarray(fwd.row_ptr))  # tokens per chunk
        chunks_per_note = np.bincount(np.asarray(self.chunk_note), minlength=len(self.note_paths))
        tokens_per_note = np.bincount(np.asarray(self.chunk_note), weights=per_chunk, minlength=len(self.note_paths))
        caveats = {s.path: s for s in self.skipped}
        rows: list[dict[str, Any]] = []
        for i, path in enumerate(self.note_paths):
            note = self.notes[i]
            caveat = caveats.pop(path, None)
            rows.append(
                {
                    "path": shown(path),
                    "status": "decoded" if caveat is not None else "indexed",
                    "reason": caveat.reason if caveat is not None else None,
                    "chunks": int(chunks_per_note[i]),
                    "tokens": int(tokens_per_note[i]),
                    "pages": note.meta.get("pages"),
                    "indexed_at": note.indexed_at or self.built_at,
                }
            )
        for s in caveats.values():
            rows.append(
                {
                    "path": shown(s.path),
                    "status": "skipped",
                    "reason": s.reason,
                    "chunks": 0,
                    "tokens": 0,
                    "pages": None,
                    "indexed_at": None,
                }
            )
        return sorted(rows, key=lambda r: r["path"])

    def note_index(self, path: str) -> int | None:
        """The index of the note at relative `path` (None when it is not in the index)."""
        if self._path_index is None:
            self._path_index = {p: i for i, p in enumerate(self.note_paths)}
        return self._path_index.get(path)

    def chunk_at(self, path: str, span: tuple[int, int]) -> int | None:
        """The chunk id of the passage `span` of note `path` in this index, if it still exists
        (how a pinned or unticked result follows its passage across a refresh)."""
        note = self.note_index(path)
        if note is None:
            return None
        for c in self.chunks_of_note(note):
            if tuple(int(x) for x in self.spans[c]) == span:
                return c
        return None

    def chunk_context(self, chunk_id: int) -> str:
        """Text indexed with the chunk besides its own (title and headings), or "" when context is off."""
        if not self.settings.chunk.indexes_context:
            return ""
        note = self.notes[int(self.chunk_note[chunk_id])]
        heading = self.headings[int(self.heading_ids[chunk_id])]
        return context_text(note_title(note.meta, note.path), heading)

    def chunks_of_note(self, note_idx: int) -> range:
        return range(int(self._note_first_chunk[note_idx]), int(self._note_first_chunk[note_idx + 1]))

    def is_stale(self, chunk_id: int) -> bool:
        """True when the chunk's note changed (or vanished) on disk since indexing."""
        note = self.notes[int(self.chunk_note[chunk_id])]
        try:
            st = os.stat(self.folder / note.path)
        except OSError:
            return True
        return st.st_size != note.size or st.st_mtime_ns != note.mtime_ns

    # ---- indexes ---------------------------------------------------------------------------
    def forward(self) -> ForwardIndex:
        if self._forward is None:
            self._forward = self._compose_forward() if self.base is not None else _load_forward(self.generation)
        return self._forward

    def _compose_forward(self) -> ForwardIndex:
        """The forward index in the merged numbering, over base words plus the delta's new ones
        (only needed to merge everything into a new base; analyzers derive per segment)."""
        assert self.base is not None and self.delta is not None
        bf, df_ = self.base.forward(), self.delta.forward()
        vocab = dict(zip(bf.vocab, range(len(bf.vocab))))  # base ids kept, the delta's new words after
        dmap = intern_words(vocab, df_.vocab)
        live = np.flatnonzero(self._base_remap >= 0)
        b_ptr, d_ptr = np.asarray(bf.row_ptr), np.asarray(df_.row_ptr)
        row_len = np.zeros(self.n_chunks, np.int64)
        row_len[self._base_remap[live]] = np.diff(b_ptr)[live]
        row_len[self._delta_remap] = np.diff(d_ptr)
        ptr = np.concatenate(([0], np.cumsum(row_len))).astype(np.int64)
        word_ids, counts = np.empty(int(ptr[-1]), np.int32), np.empty(int(ptr[-1]), np.int32)
        segments = ((bf, live, self._base_remap[live], None), (df_, np.arange(df_.n_chunks), self._delta_remap, dmap))
        for seg, rows, dest, mapping in segments:
            seg_ptr = np.asarray(seg.row_ptr)
            lengths = np.diff(seg_ptr)[rows]
            src_idx, dst_idx = ranges(seg_ptr[rows], lengths), ranges(ptr[dest], lengths)
            ids_part = np.asarray(seg.word_ids)[src_idx]
            word_ids[dst_idx] = mapping[ids_part] if mapping is not None else ids_part
            counts[dst_idx] = np.asarray(seg.counts)[src_idx]
        return ForwardIndex(list(vocab), ptr, word_ids, counts)

    def analyzer(self, config: AnalyzerConfig) -> Analyzer:
        if config.key not in self._analyzers:
            self._analyzers[config.key] = Analyzer(config)
        return self._analyzers[config.key]

    def term_index(self, config: AnalyzerConfig) -> TermIndex | MergedTermIndex:
        """The analyzer's index: from memory, from disk, or derived (and stored) on first use."""
        if len(config.parts()) > 1:
            raise ValueError(f"{config.name} combines several indexes; ask for each of config.parts()")
        key = config.key
        if key in self._terms:
            return self._terms[key]
        if self.base is not None and self.delta is not None:
            base_ti = self.base.term_index(config)
            assert isinstance(base_ti, TermIndex)
            dead_rows = np.flatnonzero(self._base_remap < 0)
            dead_terms = terms_of_rows(self.base.forward(), dead_rows, self.analyzer(config)) if len(dead_rows) else ()
            dead_ids = {tid for t in dead_terms if (tid := base_ti.term_id(t)) is not None}
            delta_ti = self.delta.term_index(config)
            assert isinstance(delta_ti, TermIndex)
            doc_len = self._merge_rows(base_ti.doc_len, delta_ti.doc_len)
            merged = MergedTermIndex(base_ti, delta_ti, self._base_remap, self._delta_remap, doc_len, dead_ids)
            self._terms[key] = merged
            return merged
        sub = self.generation / f"terms-{key}"
        ti: TermIndex | None = None
        damaged = False
        if sub.is_dir():
            try:
                ti = _load_term_index(sub, self.n_chunks)
            except store.IndexDamaged:
                ti, damaged = None, True
        if ti is None:
            ti = derive_term_index(self.forward(), self.analyzer(config))
            _publish_term_index(self.generation, key, lambda d: _save_term_index(d, ti), replace=damaged)
        self._terms[key] = ti
        return ti

    def warm(self, config: AnalyzerConfig, workers: int | None = None) -> None:
        """Load or derive every index `config` needs (done by the worker, before the first query).

        On a large folder, missing indexes are derived side by side in worker processes that read
        the forward index from disk and publish their result; this process then maps them.
        """
        if self.base is not None and self.delta is not None:
            self.base.warm(config, workers)
            self.delta.warm(config, 1)
            for cfg, _ in config.parts():
                self.term_index(cfg)
            return
        missing = [
            cfg
            for cfg, _ in config.parts()
            if cfg.key not in self._terms and not (self.generation / f"terms-{cfg.key}").is_dir()
        ]
        n_workers = min(len(missing), workers if workers is not None else (os.cpu_count() or 1))
        if n_workers > 1 and len(self.forward().word_ids) >= PARALLEL_DERIVE_POSTINGS:
            try:
                with worker_pool(n_workers) as pool:
                    for fut in [pool.submit(_derive_and_publish, str(self.generation), cfg) for cfg in missing]:
                        fut.result()
            except (BrokenProcessPool, OSError):
                pass  # derive here instead, below
        for cfg, _ in config.parts():
            self.term_index(cfg)

    # ---- querying ---------------------------------------------------------------------------
    def _prepare(self, query: str, config: AnalyzerConfig) -> list[_Part]:
        """Per single-index analyzer of `config`: its index, weight and the query's terms in it."""
        parts = []
        for cfg, weight in config.parts():
            ti = self.term_index(cfg)
            found = [(term, words, ti.term_id(term)) for term, words in self.analyzer(cfg).query_terms(query)]
            known = [tid for _, _, tid in found if tid is not None]
            n_t = dict(zip(known, ti.dfs(np.array(known, np.int64)).tolist())) if known else {}
            qterms = [(t, tuple(w), tid if n_t.get(tid, 0) > 0 else None) for t, w, tid in found]
            parts.append(_Part(cfg, weight, ti, qterms, [n_t.get(tid, 0) for _, _, tid in found]))
        return parts

    @staticmethod
    def _refs(parts: list[_Part]) -> list[QueryTermRef]:
        return [QueryTermRef(p.index, tid, p.weight) for p in parts for tid in p.present]

    def search(
        self,
        query: str,
        analyzer: AnalyzerConfig | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        k: int = 10,
        explain: bool = True,
        mode: str = "bm25",
        embedder: Embedder | None = None,
    ) -> SearchResult:
        """Rank chunks for `query`; never raises on odd queries, says why a result is empty instead.

        `mode` "dense" ranks by cosine similarity of embeddings, "hybrid" fuses the BM25 and dense
        rankings by reciprocal rank fusion; both need an `embedder` (see core.dense).
        """
        config = analyzer or AnalyzerConfig()
        t0 = time.perf_counter()
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if mode != "bm25" and embedder is None:
            raise DenseUnavailable(f"{mode} search needs an embedding backend")
        parts = self._prepare(query, config)
        main = parts[0]  # the reason and |D| are reported for the primary analyzer
        reason = None
        if not main.qterms:
            reason = "the query has no searchable words"
        elif not any(p.present for p in parts):
            reason = "none of the query terms occur in the notes"
        elif len(main.present) < len(main.qterms):
            reason = _not_in_notes([t for t, _, tid in main.qterms if tid is None])
        depth = k if mode == "bm25" else max(k, FUSION_DEPTH)
        docs, scores = search_top_k(self._refs(parts), self.n_chunks, k1, b, depth)
        ranked: list[tuple[int, float, Fusion | None]] = list(zip(docs.tolist(), scores.tolist(), [None] * len(docs)))
        if mode != "bm25" and embedder is not None:
            ranked = self._dense_ranking(query, embedder, list(zip(docs.tolist(), scores.tolist())), mode, k)
            if mode == "dense":
                reason = None if ranked else "the query has no searchable words"
        hits = []
        shown = ranked[:k]
        explained = self._rows(parts, [doc for doc, _, _ in shown], k1, b) if explain else [[] for _ in shown]
        for rank, ((doc, score, fusion), rows) in enumerate(zip(shown, explained), start=1):
            c = self.chunk(doc)
            length = int(main.index.doc_len[doc])
            hits.append(
                Hit(
                    rank,
                    score,
                    doc,
                    c.path,
                    c.heading,
                    c.start_line,
                    c.end_line,
                    length,
                    c.text,
                    rows,
                    fusion,
                    (c.start, c.end),
                    c.page,
                )
            )
        took = (time.perf_counter() - t0) * 1000
        terms = [QueryTerm(t, w, n_t) for p in parts for (t, w, _), n_t in zip(p.qterms, p.dfs)]
        ti = main.index
        return SearchResult(query, config.key, k1, b, ti.n_docs, ti.avgdl, took, hits, terms, reason, mode)

    def count_matches(self, query: str, analyzer: AnalyzerConfig | None = None) -> int:
        """How many chunks contain at least one of the query's terms (the BM25 ranking's length),
        for "30 of N matches". Reads each query term's postings once."""
        hit = np.zeros(self.n_chunks, dtype=bool)
        for ref in self._refs(self._prepare(query, analyzer or AnalyzerConfig())):
            docs, _ = ref.index.postings(ref.term_id)
            hit[np.asarray(docs)] = True
        return int(hit.sum())

    def _dense_ranking(
        self, query: str, embedder: Embedder, bm25: list[tuple[int, float]], mode: str, k: int
    ) -> list[tuple[int, float, Fusion | None]]:
        """Dense ranking (cosine) or its fusion with the BM25 ranking, each hit with its Fusion."""
        if not query.strip():
            return []
        matrix = self.dense_matrix(embedder)
        ids, cosines = dense_top_k(matrix, embedder.embed([query])[0], max(k, FUSION_DEPTH))
        dense = list(zip(ids.tolist(), cosines.tolist()))
        if mode == "dense":
            bm25_rank = {doc: (i + 1, s) for i, (doc, s) in enumerate(bm25)}
            return [
                (doc, cos, Fusion(*bm25_rank.get(doc, (None, None)), i + 1, cos)) for i, (doc, cos) in enumerate(dense)
            ]
        return [(doc, f.score, f) for doc, f in rrf_fuse(bm25, dense, max(k, FUSION_DEPTH))]

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

    def _dense_path(self, name: str) -> Path:
        return self.generation / f"dense-{name}.npy"

    def has_dense(self, name: str = WordLlamaEmbedder.name) -> bool:  # name: see core.dense.embedder_name
        """Whether this index already holds embeddings from the named backend."""
        if self.base is not None and self.delta is not None:
            return self.base.has_dense(name) and self.delta.has_dense(name)
        return self._dense_path(name).is_file()

    def stored_dense(self, name: str) -> np.ndarray | None:
        """This index's stored embeddings (memory-mapped), or None. The map stays valid on POSIX even
        after a refresh deletes this generation, which is how a refresh reuses them."""
        if self.base is not None and self.delta is not None:
            if name not in self._dense:
                b_rows, d_rows = self.base.stored_dense(name), self.delta.stored_dense(name)
                if b_rows is None or d_rows is None or b_rows.shape[1:] != d_rows.shape[1:]:
                    return None
                self._dense[name] = self._merge_rows(b_rows, d_rows)
            return self._dense[name]
        try:
            matrix = np.load(self._dense_path(name), mmap_mode="r")
        except (OSError, ValueError):
            return None
        return matrix if matrix.shape[0] == self.n_chunks else None

    def _merge_rows(self, b_rows: np.ndarray, d_rows: np.ndarray) -> np.ndarray:
        """Per-chunk rows of the two segments of a composed index, in the merged order."""
        live = np.flatnonzero(self._base_remap >= 0)
        out = np.empty((self.n_chunks, *b_rows.shape[1:]), b_rows.dtype)
        out[self._base_remap[live]] = b_rows[live]
        out[self._delta_remap] = d_rows
        return out

    def dense_matrix(
        self,
        embedder: Embedder,
        batch: int = 2048,
        previous: Library | None = None,
        previous_rows: np.ndarray | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """The chunks' embeddings (float16, memory-mapped), computed and stored on first use.

        With `previous` (the index this one refreshed) and its embeddings, the rows of unchanged notes
        are copied, so only new and changed chunks are embedded again.
        """
        stored = self.stored_dense(embedder.name)
        if stored is not None:
            return stored
        if previous is not None and previous_rows is None:
            previous_rows = previous.stored_dense(embedder.name)
        if self.base is not None and self.delta is not None:  # each segment embeds (and stores) its own chunks
            b_rows = self.base.dense_matrix(embedder, batch, progress=progress)
            d_rows = self.delta.dense_matrix(embedder, batch, previous, previous_rows, progress)
            self._dense[embedder.name] = self._merge_rows(b_rows, d_rows)
            return self._dense[embedder.name]
        path = self._dense_path(embedder.name)
        rows: np.ndarray | None = None
        todo = np.ones(self.n_chunks, dtype=bool)
        if previous is not None and previous_rows is not None and previous.settings == self.settings:
            old = previous_rows
            rows = np.zeros((self.n_chunks, old.shape[1]), np.float16)
            prev_by_path = {p: i for i, p in enumerate(previous.note_paths)}
            for ni, p in enumerate(self.note_paths):
                pi = prev_by_path.get(p)
                if pi is None or previous.notes[pi].sha1 != self.notes[ni].sha1:
                    continue
                new, prev = self.chunks_of_note(ni), previous.chunks_of_note(pi)
                if len(new) == len(prev):
                    rows[new.start : new.stop] = old[prev.start : prev.stop]
                    todo[new.start : new.stop] = False
        ids = np.flatnonzero(todo)
        parts = []
        for start in range(0, len(ids), batch):
            chunk_ids = ids[start : start + batch].tolist()  # only the chunks that need embedding are read
            parts.append(embedder.embed(self.chunk_texts(chunk_ids)).astype(np.float16))
            if progress is not None:
                progress(start + len(chunk_ids), len(ids))
        fresh = np.concatenate(parts) if parts else None
        if rows is None:
            matrix = fresh if fresh is not None else np.zeros((0, 1), np.float16)
        else:
            if fresh is not None:
                rows[ids] = fresh
            matrix = rows
        tmp = store.tmp_name(path)
        try:
            store.save_array(tmp, matrix)
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)  # a read-only cache still searches, it just embeds again
        return matrix

    def rank_of(
        self, query: str, chunk_id: int, analyzer: AnalyzerConfig, k1: float = DEFAULT_K1, b: float = DEFAULT_B
    ) -> int | None:
        """1-based rank of a chunk for `query` under `analyzer` (None when it does not match)."""
        docs, scores = score_all(self._refs(self._prepare(query, analyzer)), self.n_chunks, k1, b)
        where = np.flatnonzero(docs == chunk_id)
        if not len(where):
            return None
        s = scores[where[0]]
        return int(np.sum(scores > s) + np.sum((scores == s) & (docs < chunk_id))) + 1

    def explain(
        self,
        query: str,
        chunk_id: int,
        analyzer: AnalyzerConfig | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> list[TermRow]:
        """One row per distinct query term (per analyzer part) for `chunk_id`; they sum to its score."""
        return self._rows(self._prepare(query, analyzer or AnalyzerConfig()), [chunk_id], k1, b)[0]

    def highlight_spans(self, text: str, query: str, analyzer: AnalyzerConfig) -> list[tuple[int, int, str]]:
        """(start, end, term) of the words in `text` that match the query (for highlighting).

        A word matches through trigrams only when at least half of its trigrams are query trigrams,
        so a shared "_co" does not light up every word that starts like the query.
        """
        spans: dict[tuple[int, int], str] = {}
        for cfg, _ in analyzer.parts():
            a = self.analyzer(cfg)
            terms = {t for t, _ in a.query_terms(query)}
            by_word: dict[tuple[int, int], list[str]] = {}
            for t in a.tokens(text):
                by_word.setdefault((t.start, t.end), []).append(t.term)
            for span, word_terms in by_word.items():
                hits = [t for t in word_terms if t in terms]
                if hits and (cfg.name != "trigrams" or 2 * len(hits) >= len(word_terms)):
                    spans.setdefault(span, hits[0])
        return sorted((s, e, term) for (s, e), term in spans.items())

    @staticmethod
    def _rows(parts: list[_Part], docs: Sequence[int], k1: float, b: float) -> list[list[TermRow]]:
        """The explanation rows of each of `docs`: all their term frequencies looked up in one pass."""
        out: list[list[TermRow]] = [[] for _ in docs]
        where = np.asarray(docs, dtype=np.int64)
        for p in parts:
            ti, cfg_name = p.index, p.config.name
            n, avgdl = ti.n_docs, ti.avgdl
            lengths = [int(x) for x in np.asarray(ti.doc_len)[where]]
            present = [tid for _, _, tid in p.qterms if tid is not None]
            freqs = iter(ti.frequencies(present, where).tolist()) if present else iter(())
            for term, words, tid in p.qterms:
                n_t = ti.df(tid) if tid is not None else 0
                fs = next(freqs) if tid is not None else [0] * len(docs)
                term_of_docs = term_rows(term, words, n, n_t, fs, lengths, avgdl, k1, b, cfg_name, p.weight)
                for rows, row in zip(out, term_of_docs):
                    rows.append(row)
        return out


MISSING_TERMS_SHOWN = 20


def _not_in_notes(missing: list[str]) -> str:
    """The result's reason for query terms no note has: the first few, then how many more."""
    shown_terms = ", ".join(missing[:MISSING_TERMS_SHOWN])
    more = len(missing) - MISSING_TERMS_SHOWN
    return "not in the notes: " + shown_terms + (f" and {more} more" if more > 0 else "")


class _Records(Sequence[NoteRecord]):
    """A read-only sequence of note records, fetched one at a time by `_get`."""

    def _get(self, i: int) -> NoteRecord:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> NoteRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[NoteRecord]: ...
    def __getitem__(self, i: int | slice) -> NoteRecord | list[NoteRecord]:
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(len(self)))]
        return self._get(i + len(self) if i < 0 else i)


class _LazyNotes(_Records):
    """The notes table, parsed a record at a time on first use: opening a large index stays cheap
    (and light on the GIL, which the window's thread shares)."""

    def __init__(self, path: Path, count: int) -> None:
        try:
            self._lines = path.read_bytes().split(b"\n")[:count]
        except OSError as exc:
            raise store.IndexDamaged(f"cannot read {path.name}: {exc}") from exc
        if len(self._lines) != count:
            raise store.IndexDamaged(f"{path.name} has {len(self._lines)} notes, expected {count}")
        self._cache: dict[int, NoteRecord] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def _get(self, i: int) -> NoteRecord:
        note = self._cache.get(i)
        if note is None:
            try:
                note = NoteRecord(**json.loads(self._lines[i].decode("utf-8", "surrogatepass")))
            except (ValueError, TypeError) as exc:
                raise store.IndexDamaged(f"damaged note record {i}: {exc}") from exc
            self._cache[i] = note
        return note


class _ComposedNotes(_Records):
    """The notes of a composed index: base and delta records in the merged order."""

    def __init__(self, base: Sequence[NoteRecord], delta: Sequence[NoteRecord], src: np.ndarray) -> None:
        self._base, self._delta, self._src = base, delta, src

    def __len__(self) -> int:
        return len(self._src)

    def _get(self, i: int) -> NoteRecord:
        s = int(self._src[i])
        return self._base[s] if s >= 0 else self._delta[-1 - s]


@dataclass
class _Part:
    """One single-index analyzer taking part in a query, with the query's terms in its index."""

    config: AnalyzerConfig
    weight: float
    index: TermIndex | MergedTermIndex
    qterms: list[tuple[str, tuple[str, ...], int | None]]  # term, query words, id (None: not in the notes)
    dfs: list[int]  # n_t per query term (0: not in the notes)

    @property
    def present(self) -> list[int]:
        return [tid for _, _, tid in self.qterms if tid is not None]


def _load_paths(generation: Path, manifest: dict[str, Any]) -> list[str]:
    """The notes' relative paths, a JSON list (any character a file name can hold, a newline or an
    undecodable byte kept as an escaped surrogate, round-trips), checked against the note count."""
    try:
        paths = json.loads(store.load_blob(generation, "paths"))
    except ValueError as exc:
        raise store.IndexDamaged(f"damaged note paths in {generation}: {exc}") from exc
    expected = manifest.get("counts", {}).get("files")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or len(paths) != expected:
        raise store.IndexDamaged(f"note paths in {generation} do not match its {expected} notes")
    return paths


def _load_forward(generation: Path) -> ForwardIndex:
    vocab = store.load_blob(generation, "vocab").decode("utf-8")
    fwd = ForwardIndex(
        vocab.split("\n") if vocab else [],
        store.load_array(generation, "fwd_ptr"),
        store.load_array(generation, "fwd_ids"),
        store.load_array(generation, "fwd_counts"),
    )
    store.require(
        store.ascending(fwd.row_ptr, 0, len(fwd.word_ids)) and len(fwd.counts) == len(fwd.word_ids),
        generation,
        "forward index pointers",
    )
    return fwd


def _publish_term_index(generation: Path, key: str, write: Callable[[Path], None], replace: bool = False) -> None:
    """Publish an analyzer's index folder, written by `write` into a temporary folder (`replace`:
    the folder there is damaged and goes)."""
    try:
        store.publish_subdir(generation, f"terms-{key}", write, replace=replace)
    except OSError:
        pass  # a read-only cache still searches, it just derives again next time


def _derive_and_publish(generation: str, config: AnalyzerConfig) -> None:
    """Worker process: derive one analyzer's index from the stored forward index and publish it
    (the compiled derivation writes its postings straight into the files being published)."""
    gen = Path(generation)
    forward = _load_forward(gen)

    def write(folder: Path) -> None:
        ti = derive_term_index(forward, Analyzer(config), out_dir=folder)
        _save_term_index(folder, ti)
        del ti  # unmap its files before the folder is renamed into place

    _publish_term_index(gen, config.key, write)


def _save_term_index(folder: Path, ti: TermIndex) -> None:
    arrays = {
        "indptr": ti.indptr,
        "docs": ti.docs,
        "tfs": ti.tfs,
        "doc_len": ti.doc_len,
        # score bounds for the default k1 and b, so a reopened index prunes from the first query
        "bounds": ti.max_tf_weights(DEFAULT_K1, DEFAULT_B),
    }
    in_place = {name for name in arrays if (folder / f"{name}.npy").exists()}  # written by the derivation
    files = store.write_arrays(
        folder,
        {name: arr for name, arr in arrays.items() if name not in in_place},
        {"terms": "\n".join(ti.terms).encode("utf-8")},
    )
    files.update({f"{name}.npy": store.file_info(folder / f"{name}.npy") for name in in_place})
    store.write_json(folder / store.MANIFEST, {"format": store.FORMAT_VERSION, "files": files})


def _load_term_index(folder: Path, n_chunks: int) -> TermIndex:
    manifest = store.read_manifest(folder)
    store.check_files(folder, manifest["files"])  # the small arrays (lengths, bounds, pointers) by checksum
    terms = store.load_blob(folder, "terms").decode("utf-8")
    ti = TermIndex(
        terms.split("\n") if terms else [],
        store.load_array(folder, "indptr"),
        store.load_array(folder, "docs"),
        store.load_array(folder, "tfs"),
        store.load_array(folder, "doc_len"),
    )
    bounds = store.load_array(folder, "bounds")
    need = store.require
    need(store.ascending(ti.indptr, 0, len(ti.docs)) and len(ti.tfs) == len(ti.docs), folder, "posting pointers")
    need(len(ti.indptr) == len(ti.terms) + 1 and len(bounds) == len(ti.terms), folder, "one row per term")
    need(len(ti.doc_len) == n_chunks and (not n_chunks or ti.doc_len.min() >= 0), folder, "chunk lengths")
    ti.seed_bounds(DEFAULT_K1, DEFAULT_B, bounds)
    return ti


# ---- building ---------------------------------------------------------------------------------
def _batches(files: list[NoteFile]) -> list[list[NoteFile]]:
    out: list[list[NoteFile]] = []
    cur: list[NoteFile] = []
    size = 0
    for f in files:
        cur.append(f)
        size += f.size
        if size >= BATCH_BYTES or len(cur) >= BATCH_FILES:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


def _run_batches(
    batches: list[list[NoteFile]],
    options: ChunkOptions,
    pool: ProcessPoolExecutor | None,
    total_files: int,
    done_files: int,
    progress: ProgressFn | None,
    cancelled: CancelFn | None,
) -> list[BatchResult]:
    """Process batches, in the worker processes of `pool` if given; results in batch order."""
    results: list[BatchResult | None] = [None] * len(batches)
    chunks = 0

    def report(i: int, result: BatchResult) -> None:
        nonlocal done_files, chunks
        results[i] = result
        done_files += len(batches[i])
        chunks += len(result.headings)
        if progress is not None:
            progress(done_files, total_files, chunks, batches[i][-1].path)

    if pool is not None:
        try:
            pending = {pool.submit(process_batch, batch, options): i for i, batch in enumerate(batches)}
            try:
                while pending:
                    done, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                    _check_cancel(cancelled)
                    for fut in done:
                        report(pending.pop(fut), fut.result())
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        except BrokenProcessPool:
            pass  # workers could not start (e.g. no importable __main__): finish in this process
    for i, batch in enumerate(batches):
        if results[i] is None:
            _check_cancel(cancelled)
            report(i, process_batch(batch, options))
    return [r for r in results if r is not None]


def _check_cancel(cancelled: CancelFn | None) -> None:
    if cancelled is not None and cancelled():
        raise BuildCancelled("indexing was cancelled")


def _imported() -> None:
    """Nothing: a worker that runs it has imported this module (and the index code) to find it."""


def _derive_in(
    pool: ProcessPoolExecutor, config: AnalyzerConfig, cancelled: CancelFn | None
) -> Callable[[Path], Callable[[], None]]:
    """Start deriving `config`'s indexes in `pool` once a generation's forward index is on disk
    (the batch workers are warm and idle while this process writes the rest of the generation);
    returns a function that waits for them. A derivation that failed is done again by `warm`."""

    def start(gen: Path) -> Callable[[], None]:
        try:
            futures = [pool.submit(_derive_and_publish, str(gen), cfg) for cfg, _ in config.parts()]
        except (BrokenProcessPool, RuntimeError):  # no workers (or shut down): derived on first use
            return lambda: None

        def finish() -> None:
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.1)
                _check_cancel(cancelled)

        return finish

    return start


def _same_settings(previous: Library | None, settings: IndexSettings) -> bool:
    return previous is not None and previous.settings == settings


def build_index(
    folder: str | os.PathLike[str],
    index_dir: str | os.PathLike[str] | None = None,
    settings: IndexSettings | None = None,
    progress: ProgressFn | None = None,
    cancelled: CancelFn | None = None,
    workers: int | None = None,
    previous: Library | None = None,
    reuse_stored: bool = True,
    warm: AnalyzerConfig | None = None,
    waiting: Callable[[], None] | None = None,
) -> tuple[Library, BuildReport]:
    """Build or refresh the index of `folder`, re-reading only new and changed notes.

    `reuse_stored=False` ignores the stored index (a full build), e.g. after it was found damaged.
    `warm`: also derive (or load) that analyzer's indexes before returning, as `Library.warm`
    does; a full build derives them in its worker processes while it writes the rest.

    The result is exactly what a full rebuild gives (same chunks, N, avgdl, n_t, scores).
    On cancel or failure nothing is published and the previous index stays current.
    Builds of one index run one at a time (an OS lock on the index folder): a second one waits
    (`waiting` is called once) and then finds the index current, or refreshes what changed since.
    """
    t0 = time.perf_counter()
    folder_path = Path(folder).resolve()
    root = store.index_dir_for(folder_path, index_dir)
    try:
        with store.build_lock(root, cancelled, waiting):
            store.remove_stale_temporaries(root)
            if previous is not None and reuse_stored:
                current = store.current_generation(root)
                stale = current is None or current.name != previous.generation.name  # another process built since
                if stale or previous.folder != folder_path:
                    previous = None
            return _build_locked(
                t0,
                folder_path,
                root,
                settings or IndexSettings(),
                progress,
                cancelled,
                workers,
                previous,
                reuse_stored,
                warm,
            )
    except store.IndexBusy as exc:  # cancelled while another process held the lock
        raise BuildCancelled(f"indexing was cancelled while {exc}") from exc


def _build_locked(
    t0: float,
    folder_path: Path,
    root: Path,
    settings: IndexSettings,
    progress: ProgressFn | None,
    cancelled: CancelFn | None,
    workers: int | None,
    previous: Library | None,
    reuse_stored: bool,
    warm: AnalyzerConfig | None,
) -> tuple[Library, BuildReport]:
    """build_index's work, with the index's build lock held."""
    if previous is None and reuse_stored:
        try:
            previous = Library.open(folder_path, root)
        except store.IndexDamaged:
            previous = None
    if not _same_settings(previous, settings):
        previous = None
    files, walk_skipped = walk_notes(folder_path, settings.load)
    prev_by_path = {p: i for i, p in enumerate(previous.note_paths)} if previous else {}
    prev_read_skips = {s.path: s for s in previous.skipped if s.size >= 0} if previous else {}
    reuse: dict[str, int] = {}
    carried: list[Skipped] = []  # files that failed to read before and have not changed since
    todo: list[NoteFile] = []
    sizes = previous.note_size.tolist() if previous else []
    mtimes = previous.note_mtime.tolist() if previous else []
    for f in files:
        pi = prev_by_path.get(f.path)
        if pi is not None and sizes[pi] == f.size and mtimes[pi] == f.mtime_ns:
            reuse[f.path] = pi
            continue
        old = prev_read_skips.get(f.path)
        if old is not None and not old.loaded and (old.size, old.mtime_ns) == (f.size, f.mtime_ns):
            carried.append(old)
            continue
        todo.append(f)
    report = BuildReport()
    report.changed = sum(1 for f in todo if f.path in prev_by_path)
    report.removed = len(prev_by_path) - len(reuse) - report.changed  # a previous note still here is one of those
    report.added = len(todo) - report.changed
    report.unchanged = len(reuse)
    stored_walk_skips = {(s.path, s.reason) for s in previous.skipped if s.size < 0} if previous else set()
    if (
        previous is not None
        and not todo
        and not report.removed
        and stored_walk_skips == {(s.path, s.reason) for s in walk_skipped}
        and len(carried) == sum(1 for s in previous.skipped if s.size >= 0 and not s.loaded)
    ):
        report.rebuilt = False
        report.files, report.chunks, report.tokens = len(previous.notes), previous.n_chunks, previous.n_tokens
        report.skipped = previous.skipped
        if warm is not None:
            previous.warm(warm)
        report.elapsed_s = time.perf_counter() - t0
        if progress is not None:
            progress(len(files), len(files), previous.n_chunks, "")
        return previous, report
    todo_bytes = sum(f.size for f in todo)
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if todo_bytes < PARALLEL_MIN_BYTES:
        n_workers = 1
    with contextlib.ExitStack() as stack:
        pool = None
        if n_workers > 1:
            pool = stack.enter_context(worker_pool(n_workers))
        results = _run_batches(_batches(todo), settings.chunk, pool, len(files), len(reuse), progress, cancelled)
        _check_cancel(cancelled)
        if pool is not None and warm is not None:  # the workers import the derivation while this process merges
            with contextlib.suppress(BrokenProcessPool, RuntimeError):  # no workers: derived here later
                for _ in range(n_workers):
                    pool.submit(_imported)
        # Every skipped or re-decoded file: found by the walk, unreadable as before, re-decoded as
        # before (notes kept), or found now.
        skipped = walk_skipped + carried + [s for p, s in prev_read_skips.items() if s.loaded and p in reuse]
        skipped = sorted(skipped + [s for r in results for s in r.skipped], key=lambda s: s.path)
        plan = _plan_delta(previous, files, reuse)
        if plan is not None and previous is not None:
            library = _write_delta(folder_path, root, settings, files, plan, previous, results, skipped)
        else:
            derive = _derive_in(pool, warm, cancelled) if pool is not None and warm is not None else None
            library = _assemble(folder_path, root, settings, files, reuse, previous, results, skipped, derive)
    if warm is not None:
        library.warm(warm)
    report.files, report.chunks, report.tokens = len(library.notes), library.n_chunks, library.n_tokens
    report.skipped = library.skipped
    report.elapsed_s = time.perf_counter() - t0
    return library, report


def _write_segment(
    gen: Path,
    folder: Path,
    settings: IndexSettings,
    files: list[NoteFile],
    reuse: dict[str, int],
    previous: Library | None,
    results: list[BatchResult],
    skipped: list[Skipped],
    derive: Callable[[Path], Callable[[], None]] | None = None,
) -> dict[str, Any]:
    """Write reused notes (from `previous`) and freshly processed batches, in path order, into
    the folder `gen` as a complete index, with `skipped` as its list of skipped files; returns
    its manifest. `results` is consumed (emptied), so their memory goes as soon as it is written.
    `derive(gen)` is called once the forward index is on disk; what it returns is called before
    the manifest is written."""
    vocab: dict[str, int] = {}
    headings: dict[str, int] = {}
    if previous is not None:
        fwd = previous.forward()
        # Same ids as before, so the reused rows keep pointing at the right words and headings.
        vocab.update(zip(fwd.vocab, range(len(fwd.vocab))))
        headings.update(zip(previous.headings, range(len(previous.headings))))
    # Where each new note lives: (batch index, note index in that batch).
    fresh: dict[str, tuple[int, int]] = {}
    batch_maps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for bi, r in enumerate(results):
        hmap = intern_words(headings, r.headings)
        r.word_ids = intern_words(vocab, r.vocab)[r.word_ids]  # the batch's rows in the index's word ids
        r.vocab, r.headings = [], []  # consumed: millions of strs on a large folder, no longer held
        row_ptr = np.concatenate(([0], np.cumsum(r.row_len))).astype(np.int64)
        chunk_ptr = np.concatenate(([0], np.cumsum([n.n_chunks for n in r.notes]))).astype(np.int64)
        batch_maps.append((hmap, row_ptr, chunk_ptr))
        for ni, n in enumerate(r.notes):
            fresh[n.path] = (bi, ni)
    notes: list[NoteRecord] = []
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("span", "lines", "heading", "row_len", "ids", "counts")}
    texts: list[Any] = []  # bytes or memory-mapped slices, written once at the end
    if not reuse:  # every note is fresh: the batches hold them in path order already, whole batches go
        for r, (hmap, _, _) in zip(results, batch_maps):
            notes += r.notes
            texts += r.texts
            for name, arr in zip(parts, (r.spans, r.lines, hmap, r.row_len, r.word_ids, r.counts)):
                parts[name].append(arr)
    for f in files if reuse else ():
        if f.path in reuse and previous is not None:
            pi = reuse[f.path]
            notes.append(previous.notes[pi])
            texts.append(previous.note_bytes(pi))
            rng = previous.chunks_of_note(pi)
            c0, c1 = rng.start, rng.stop
            parts["span"].append(np.asarray(previous.spans[c0:c1]))
            parts["lines"].append(np.asarray(previous.lines[c0:c1]))
            parts["heading"].append(np.asarray(previous.heading_ids[c0:c1]))
            p0, p1 = int(fwd.row_ptr[c0]), int(fwd.row_ptr[c1])
            parts["row_len"].append(np.diff(np.asarray(fwd.row_ptr[c0 : c1 + 1])))
            parts["ids"].append(np.asarray(fwd.word_ids[p0:p1]))
            parts["counts"].append(np.asarray(fwd.counts[p0:p1]))
        elif f.path in fresh:
            bi, ni = fresh[f.path]
            r = results[bi]
            hmap, row_ptr, chunk_ptr = batch_maps[bi]
            notes.append(r.notes[ni])
            texts.append(r.texts[ni])
            c0, c1 = int(chunk_ptr[ni]), int(chunk_ptr[ni + 1])
            parts["span"].append(r.spans[c0:c1])
            parts["lines"].append(r.lines[c0:c1])
            parts["heading"].append(hmap[c0:c1])
            p0, p1 = int(row_ptr[c0]), int(row_ptr[c1])
            parts["row_len"].append(r.row_len[c0:c1])
            parts["ids"].append(r.word_ids[p0:p1])
            parts["counts"].append(r.counts[p0:p1])
    results.clear()  # consumed: what is left of them is in `parts`, and goes as those are joined
    note_off = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)

    def cat(name: str, dtype: Any, shape: tuple[int, ...] = (0,)) -> np.ndarray:
        # In steps of a few hundred pieces: one np.concatenate of tens of thousands of small
        # arrays holds the GIL long enough to stall the window's event loop.
        arrs = parts.pop(name)
        while len(arrs) > 256:
            arrs = [np.concatenate(arrs[i : i + 256]) for i in range(0, len(arrs), 256)]
        return np.concatenate(arrs).astype(dtype, copy=False) if arrs else np.zeros(shape, dtype)

    row_len = cat("row_len", np.int64)
    counts = cat("counts", np.int32)
    arrays = {
        "note_off": note_off,
        "chunk_note": np.repeat(np.arange(len(notes), dtype=np.int32), [n.n_chunks for n in notes]),
        "chunk_span": cat("span", np.int32, (0, 2)),
        "chunk_lines": cat("lines", np.int32, (0, 2)),
        "chunk_heading": cat("heading", np.int32),
        "fwd_ptr": np.concatenate(([0], np.cumsum(row_len))).astype(np.int64),
        "fwd_ids": cat("ids", np.int32),
        "fwd_counts": counts,
        # size and mtime per note, so a refresh finds what changed without parsing every record
        "note_size": np.array([n.size for n in notes], np.int64),
        "note_mtime": np.array([n.mtime_ns for n in notes], np.int64),
    }
    files_info = store.write_arrays(
        gen, arrays, {"vocab": "\n".join(vocab).encode("utf-8"), "headings": "\n".join(headings).encode("utf-8")}
    )
    counts_info = {"files": len(notes), "chunks": int(len(arrays["chunk_note"])), "tokens": int(counts.sum())}
    del arrays, counts, row_len  # on disk now: not held while the derivation runs
    derived = derive(gen) if derive is not None else None
    files_info["notes.npy"] = store.write_byte_array(gen / "notes.npy", texts, int(note_off[-1]))
    files_info["notes.jsonl"] = store.write_jsonl(gen / "notes.jsonl", [vars(n) for n in notes])
    paths = json.dumps([n.path for n in notes], ensure_ascii=True).encode("ascii")  # \n, \udcff and all
    files_info["paths.blob"] = store.write_blob(gen / "paths.blob", paths)
    files_info["skipped.jsonl"] = store.write_jsonl(gen / "skipped.jsonl", [vars(s) for s in skipped])
    del texts  # the note texts, on disk now
    if derived is not None:
        derived()
    return _write_manifest(gen, folder, settings, counts_info, files_info)


def _write_manifest(
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
        "folder": str(folder),
        "built_at": time.time(),
        "settings": settings.to_json(),
        "counts": counts,
        "files": files,
    }
    if base is not None:
        manifest["base"] = base  # a delta generation: its notes on top of this full one
    store.write_json(gen / store.MANIFEST, manifest)
    return manifest


def _assemble(
    folder: Path,
    root: Path,
    settings: IndexSettings,
    files: list[NoteFile],
    reuse: dict[str, int],
    previous: Library | None,
    results: list[BatchResult],
    skipped: list[Skipped],
    derive: Callable[[Path], Callable[[], None]] | None = None,
) -> Library:
    """A new full generation (a new base): every note, reused or fresh, in one segment.
    `derive` (see _derive_in) starts deriving analyzer indexes once the forward index is written."""
    gen = store.new_generation(root)
    try:
        manifest = _write_segment(gen, folder, settings, files, reuse, previous, results, skipped, derive)
        store.publish(root, gen)
    except BaseException:
        store.discard(gen)
        raise
    return Library(folder, root, gen, manifest)


@dataclass
class _DeltaPlan:
    """How a refresh splits the notes: kept from the base, or (re)written in the delta segment."""

    base: Library
    from_base: dict[str, int]  # path -> base note index
    from_delta: dict[str, int]  # path -> note index in the previous delta segment
    delta_files: list[NoteFile]


def _plan_delta(previous: Library | None, files: list[NoteFile], reuse: dict[str, int]) -> _DeltaPlan | None:
    """A delta refresh when the notes that differ from the base are few; None for a full merge."""
    if previous is None:
        return None
    base = previous.base if previous.base is not None else previous
    from_base: dict[str, int] = {}
    from_delta: dict[str, int] = {}
    note_src = previous._note_src.tolist() if previous._note_src is not None else None
    for path, pi in reuse.items():
        src = pi if note_src is None else note_src[pi]
        if src >= 0:
            from_base[path] = src
        else:
            from_delta[path] = -1 - src
    delta_files = [f for f in files if f.path not in from_base]
    total = sum(f.size for f in files)
    if len(delta_files) > DELTA_MAX_NOTES or sum(f.size for f in delta_files) > DELTA_MAX_SHARE * total:
        return None
    return _DeltaPlan(base, from_base, from_delta, delta_files)


def _write_delta(
    folder: Path,
    root: Path,
    settings: IndexSettings,
    files: list[NoteFile],
    plan: _DeltaPlan,
    previous: Library,
    results: list[BatchResult],
    skipped: list[Skipped],
) -> Library:
    """A new generation that keeps the base as it is and writes only the delta segment: the
    changed and new notes (and those changed since the base), plus the merged note order."""
    base = plan.base
    gen = store.new_generation(root)
    try:
        delta_dir = gen / "delta"
        delta_dir.mkdir()
        # The segment's own skipped list stays empty: the generation's list (below) is the one read.
        dman = _write_segment(
            delta_dir, folder, settings, plan.delta_files, plan.from_delta, previous.delta, results, []
        )
        delta = Library(folder, root, delta_dir, dman)
        in_delta = {p: -1 - j for j, p in enumerate(delta.note_paths)}
        src = [s for f in files if (s := plan.from_base.get(f.path, in_delta.get(f.path))) is not None]
        kept = np.zeros(len(base.note_paths), bool)
        kept[list(plan.from_base.values())] = True
        dead_rows = np.flatnonzero(~kept[np.asarray(base.chunk_note)])
        fwd = base.forward()
        ptr = np.asarray(fwd.row_ptr)
        dead_tokens = int(np.asarray(fwd.counts)[ranges(ptr[dead_rows], np.diff(ptr)[dead_rows])].sum())
        files_info = store.write_arrays(gen, {"note_src": np.asarray(src, np.int32)}, {})
        files_info["skipped.jsonl"] = store.write_jsonl(gen / "skipped.jsonl", [vars(s) for s in skipped])
        counts = {
            "files": len(src),
            "chunks": base.n_chunks - len(dead_rows) + delta.n_chunks,
            "tokens": base.n_tokens - dead_tokens + delta.n_tokens,
        }
        manifest = _write_manifest(gen, folder, settings, counts, files_info, base=base.generation.name)
        store.publish(root, gen, also_keep=base.generation)
    except BaseException:
        store.discard(gen)
        raise
    return Library._compose(folder, root, gen, manifest, base, delta)
