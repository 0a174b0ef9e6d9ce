"""An opened index of one notes folder: its segments read as one, in the numbering a full build
would give. This is the single source of truth for the CLI and the window: ranks, scores, per-term
breakdowns and chunk texts all come from an `IndexReader` (searching: see core.search).
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import embeddings, fileio, store
from .analyzers import Analyzer, AnalyzerConfig
from .arrays import ranges
from .dense import DenseUnavailable, E5Embedder
from .derive import segment_sums, terms_of_rows
from .layout import Layout
from .lexicon import word_list
from .loader import Skipped
from .nearest import NearestRows, SegmentedNearest
from .note_records import MergedNotes
from .params import IndexSettings, SearchParams
from .paths import shown
from .postings import ForwardIndex, MergedTermIndex, TermIndex
from .query import Query
from .query_mask import NoteFacts
from .results import SearchResult
from .search import Searcher
from .segment import ChunkTable, Segment
from .tokenize import intern_words

PARTIAL_RENEW = 0.01  # share of the chunks newly embedded after which a search quantizes them again
OPEN_ATTEMPTS = 3  # a concurrent build can publish (and prune what was being read) between attempts


class IndexReader(ChunkTable):
    """An opened (memory-mapped) index: one segment, or a base and a delta segment (a refresh)."""

    def __init__(
        self, folder: Path, root: Path, generation: Path, manifest: dict[str, Any], segments: list[Segment]
    ) -> None:
        self.folder, self.root, self.generation, self.manifest = folder, root, generation, manifest
        self.settings = IndexSettings.from_json(manifest["settings"])
        self.segments = segments
        self.skipped = [Skipped(**s) for s in fileio.read_jsonl(generation / "skipped.jsonl")]
        self.built_at: float = manifest["built_at"]
        self.n_tokens: int = manifest["counts"]["tokens"]
        if len(segments) == 1:
            seg = segments[0]
            self.layout = Layout.single(len(seg.note_paths), seg.note_first_chunk)
            self.note_paths, self.notes, self.headings = seg.note_paths, seg.notes, seg.headings
            heading_ids = [seg.heading_ids]
        else:
            base, delta = segments
            firsts = (base.note_first_chunk, delta.note_first_chunk)
            note_src = fileio.load_array(generation, "note_src")
            self.layout = Layout.compose(note_src, firsts, (base.chunk_note, delta.chunk_note))
            self.note_paths = [segments[s].note_paths[i] for s, i in zip(*self._sources())]
            self.notes = MergedNotes(segments, self.layout.note_segment, self.layout.note_local)
            headings = dict(base.heading_index())  # one id per distinct heading
            delta_heading = intern_words(headings, delta.headings)
            delta_ids = delta_heading[np.asarray(delta.heading_ids)] if len(delta_heading) else np.zeros(0, np.int32)
            self.headings = list(headings)
            heading_ids = [np.asarray(base.heading_ids), delta_ids]
        lay = self.layout
        self.note_first_chunk = lay.note_first_chunk
        counts = np.diff(lay.note_first_chunk)
        self.chunk_note = (
            segments[0].chunk_note if lay.identity else np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        )
        self.spans, self.lines, self.heading_ids = lay.per_chunk_all(
            [[s.spans for s in segments], [s.lines for s in segments], heading_ids]
        )
        self.note_size = lay.per_note([s.note_size for s in segments])
        self.note_mtime = lay.per_note([s.note_mtime for s in segments])
        self._forward: ForwardIndex | None = None
        self._terms: dict[str, TermIndex | MergedTermIndex] = {}
        self._analyzers: dict[str, Analyzer] = {}
        self._rows: dict[str, list[np.ndarray]] = {}  # complete rows per segment: found (has_meaning) or computed
        self._meaning: dict[str, np.ndarray] = {}  # embeddings laid out in the merged numbering, once
        self._nearest: dict[str, SegmentedNearest] = {}  # quantized, for searching (see nearest)
        self._partial: dict[str, tuple[int, SegmentedNearest]] = {}  # (chunks written, rows) per model
        self._path_index: dict[str, int] | None = None  # note path -> note index, built on first use
        self._facts: NoteFacts | None = None

    @cached_property
    def searcher(self) -> Searcher:
        """Ranking and explaining over this index (core.search)."""
        return Searcher(self)

    def search(self, query: str | Query, params: SearchParams | None = None, **options: Any) -> SearchResult:
        """Searcher.search over this index: the one call the CLI, the window, evaluation and tests share."""
        return self.searcher.search(query, params, **options)

    def _sources(self) -> tuple[list[int], list[int]]:
        return self.layout.note_segment.tolist(), self.layout.note_local.tolist()

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        folder: str | os.PathLike[str],
        index_dir: str | os.PathLike[str] | None = None,
        verify: bool = False,
        reuse: IndexReader | None = None,
    ) -> IndexReader:
        """Open the stored index of `folder`: store.IndexMissing when there is none, store.IndexDamaged
        when it must be rebuilt (`verify`: check every file's checksum first).

        `reuse`: an index opened earlier (e.g. before a refresh); when the stored one is a delta
        over the same base, that base is shared, with everything it has loaded and derived.
        """
        folder_path = Path(folder).resolve()
        root = store.index_dir_for(folder_path, index_dir)
        for attempt in range(OPEN_ATTEMPTS):
            gen = store.current_generation(root)
            if gen is None:
                raise store.IndexMissing(f"no index yet for {folder_path}")
            try:
                reader = cls._open_generation(folder_path, root, gen, verify, reuse)
                break
            except (FileNotFoundError, store.IndexDamaged):
                # another process published a newer generation and pruned this one while it was read
                # (its files vanish: missing, or "no manifest"): open the one CURRENT names now; damage
                # to the generation CURRENT still names is raised as before
                if attempt == OPEN_ATTEMPTS - 1 or store.current_generation(root) == gen:
                    raise
        if reader.manifest.get("folder") != str(folder_path):  # an --index-dir shared by two folders
            raise store.IndexMissing(f"the index in {root} is of another folder ({reader.manifest.get('folder')})")
        return reader

    @classmethod
    def _open_generation(
        cls, folder_path: Path, root: Path, gen: Path, verify: bool, reuse: IndexReader | None
    ) -> IndexReader:
        store.remove_stale_temporaries(root)
        try:
            manifest = store.read_manifest(gen)
            if "base" not in manifest:
                return cls(folder_path, root, gen, manifest, [Segment.open(gen, verify)])
            known = reuse.segments[0] if reuse is not None and reuse.root == root and not verify else None
            if known is not None and known.generation.name == manifest["base"]:
                base = known
            else:
                base = Segment.open(root / manifest["base"], verify)
            fileio.check_files(gen, manifest["files"], verify_crc=verify)
            return cls(folder_path, root, gen, manifest, [base, Segment.open(gen / "delta", verify)])
        except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError) as exc:
            raise store.IndexDamaged(f"damaged index in {gen}: {exc!r}") from exc

    # ---- notes -----------------------------------------------------------------------------
    def note_bytes(self, note_idx: int) -> Any:
        """The note's stored UTF-8 text (a memory-mapped slice, not a copy)."""
        seg, i = self.layout.locate(note_idx)
        return self.segments[seg].note_bytes(i)

    def note_index(self, path: str) -> int | None:
        """The index of the note at relative `path` (None when it is not in the index)."""
        return self.path_index().get(path)

    def note_facts(self) -> NoteFacts:
        """What a query's filters read of the notes (paths, tags, dates…), computed on first use."""
        if self._facts is None:
            self._facts = NoteFacts(self)
        return self._facts

    def path_index(self) -> dict[str, int]:
        """Note path -> note index, built on first use (a refresh's plan; 5 ms at 31,000 notes)."""
        if self._path_index is None:
            self._path_index = {p: i for i, p in enumerate(self.note_paths)}
        return self._path_index

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

    def is_stale(self, chunk_id: int) -> bool:
        """True when the chunk's note changed (or vanished) on disk since indexing."""
        note = self.notes[int(self.chunk_note[chunk_id])]
        try:
            st = os.stat(self.folder / note.path)
        except OSError:
            return True
        return st.st_size != note.size or st.st_mtime_ns != note.mtime_ns

    def report(self) -> list[dict[str, Any]]:
        """Every file the folder's walk found, with its status: indexed (chunks, tokens, pages, when it
        was read), decoded with a fallback (and why), or skipped (and why); in path order."""
        fwd = self.forward()
        per_chunk = segment_sums(np.asarray(fwd.counts), np.asarray(fwd.row_ptr))  # tokens per chunk
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
                    "tried_at": None,
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
                    "tried_at": s.tried_at or self.built_at,  # a passing reason is tried again at each refresh
                }
            )
        return sorted(rows, key=lambda r: r["path"])

    # ---- indexes ---------------------------------------------------------------------------
    def forward(self) -> ForwardIndex:
        """The forward index in the merged numbering (a delta's new words after the base's), only
        needed to merge everything into a new base: analyzers derive per segment."""
        if self._forward is None:
            self._forward = self.segments[0].forward() if self.layout.identity else self._merged_forward()
        return self._forward

    def _merged_forward(self) -> ForwardIndex:
        forwards = [s.forward() for s in self.segments]
        vocab = dict(zip(forwards[0].vocab, range(len(forwards[0].vocab))))  # base ids kept
        mappings = [None, *(intern_words(vocab, word_list(f.vocab)) for f in forwards[1:])]
        lives = [np.flatnonzero(remap >= 0) for remap in self.layout.chunk_remap]
        row_len = np.zeros(self.n_chunks, np.int64)
        for f, live, remap in zip(forwards, lives, self.layout.chunk_remap):
            row_len[remap[live]] = np.diff(np.asarray(f.row_ptr))[live]
        ptr = np.concatenate(([0], np.cumsum(row_len))).astype(np.int64)
        word_ids, counts = np.empty(int(ptr[-1]), np.int32), np.empty(int(ptr[-1]), np.int32)
        for f, rows, remap, mapping in zip(forwards, lives, self.layout.chunk_remap, mappings):
            seg_ptr = np.asarray(f.row_ptr)
            lengths = np.diff(seg_ptr)[rows]
            src_idx, dst_idx = ranges(seg_ptr[rows], lengths), ranges(ptr[remap[rows]], lengths)
            ids_part = np.asarray(f.word_ids)[src_idx]
            word_ids[dst_idx] = mapping[ids_part] if mapping is not None else ids_part
            counts[dst_idx] = np.asarray(f.counts)[src_idx]
        return ForwardIndex(list(vocab), ptr, word_ids, counts)

    def analyzer(self, config: AnalyzerConfig) -> Analyzer:
        if config not in self._analyzers:  # the config, not its key: query_language is not in the key
            self._analyzers[config] = Analyzer(config)
        return self._analyzers[config]

    def term_index(self, config: AnalyzerConfig) -> TermIndex | MergedTermIndex:
        """A single analyzer's index over the whole folder (see Segment.term_index)."""
        if len(config.parts()) > 1:
            raise ValueError(f"{config.name} combines several indexes; ask for each of config.parts()")
        if self.layout.identity:
            return self.segments[0].term_index(config)
        if config.key not in self._terms:
            base, delta = self.segments
            base_remap, delta_remap = self.layout.chunk_remap
            base_ti, delta_ti = base.term_index(config), delta.term_index(config)
            dead_rows = np.flatnonzero(base_remap < 0)
            dead_terms = terms_of_rows(base.forward(), dead_rows, self.analyzer(config)) if len(dead_rows) else ()
            dead_ids = {tid for t in dead_terms if (tid := base_ti.term_id(t)) is not None}
            doc_len = self.layout.per_chunk([base_ti.doc_len, delta_ti.doc_len])
            self._terms[config.key] = MergedTermIndex(base_ti, delta_ti, base_remap, delta_remap, doc_len, dead_ids)
        return self._terms[config.key]

    def ready(self, config: AnalyzerConfig) -> bool:
        """Whether searching with `config` needs no large index derived first (see Segment.ready)."""
        return all(seg.ready(config) for seg in self.segments)

    def warm(self, config: AnalyzerConfig, workers: int | None = None, apart: bool = False) -> None:
        """Load or derive every index `config` needs (done before the first query): the base in
        parallel where it is large (`apart`: in worker processes even for one index; see
        Segment.warm), a delta (always small) in this process."""
        for i, seg in enumerate(self.segments):
            seg.warm(config, workers if i == 0 else 1, apart and i == 0)
        for cfg, _ in config.parts():
            self.term_index(cfg)

    # ---- embeddings (see core.embeddings) --------------------------------------------------
    def replaced(self) -> bool:
        """Whether another process has published a newer generation of this index since it was opened."""
        current = store.current_generation(self.root)
        return current is not None and current != self.generation

    def has_meaning(self, name: str = E5Embedder.name) -> bool:  # name: see core.dense.embedder_name
        """Whether this index holds complete embeddings from the named backend (its meaning index): one
        (chunks, dim) matrix per segment, all of one dimension. Once found they are kept, mapped: a
        refresh published meanwhile deletes this generation's files (the maps stay valid), and a
        search that found them complete ranks with them rather than embed into a deleted generation."""
        if name in self._rows:
            return True
        rows = [embeddings.load_rows(seg, name) for seg in self.segments]
        if any(r is None for r in rows) or len({r.shape[1] for r in rows if r is not None}) != 1:
            return False
        self._rows[name] = rows
        return True

    def forget_meaning(self, name: str) -> None:
        """Let go of what this reader holds of `name`'s meaning index (its files were discarded as damaged)."""
        for held in (self._rows, self._meaning, self._nearest, self._partial):
            held.pop(name, None)
        for seg in self.segments:
            seg.nearest_rows.pop(name, None)

    def meaning_damage(self, name: str = E5Embedder.name) -> str | None:
        """Why a stored meaning index of `name` is not used (a damaged segment's, in a few words), or
        None: the reason a search falls back to BM25 says, never "until it is complete" over damage."""
        if name in self._rows:
            return None
        problems = (embeddings.stored_problem(seg, name) for seg in self.segments)
        return next((p for p in problems if p is not None), None)

    def meaning_progress(self, name: str = E5Embedder.name) -> tuple[int, int]:
        """Chunks whose embedding from `name` is stored (complete or resumable), of all chunks. A base's
        chunks replaced by the delta are not counted (they made "180,843 / 180,842" after an edit)."""
        done = 0
        for seg, remap in zip(self.segments, self.layout.chunk_remap):
            bits = embeddings.written(seg, name)
            if bits is not None:
                done += int(np.count_nonzero(bits & (remap >= 0)))
        return done, self.n_chunks

    def meaning_ready(self, name: str) -> bool:
        """Whether `nearest(name)` can search the whole index (its meaning index is complete)."""
        return name in self._nearest or self.has_meaning(name)  # has_meaning: held rows too

    def segment_rows(self, name: str) -> list[np.ndarray | None]:
        """Each segment's complete rows from `name`: handed over by core.meaning_writer, else the stored
        ones memory-mapped; None for a segment whose meaning index is not complete."""
        held = self._rows.get(name)
        return list(held) if held is not None else [embeddings.load_rows(seg, name) for seg in self.segments]

    def adopt_meaning(self, name: str, rows: list[np.ndarray]) -> None:
        """Take each segment's complete rows from `name` as core.meaning_writer computed them (memory-
        mapped, or in memory when the cache is read-only and nothing could be stored)."""
        self._rows[name] = rows

    def stored_meaning(self, name: str) -> np.ndarray | None:
        """This index's complete embeddings from `name` in the merged numbering (memory-mapped when it
        has one segment), or None."""
        if name not in self._meaning:
            rows = self.segment_rows(name)
            if any(r is None for r in rows) or len({r.shape[1:] for r in rows if r is not None}) > 1:
                return None
            self._meaning[name] = self.layout.per_chunk([r for r in rows if r is not None])
        return self._meaning[name]

    def nearest(self, name: str, partial: bool = False) -> SegmentedNearest:
        """The embeddings from model `name` ready for exact top-k search: each segment's quantized once
        per model and kept with the segment (int8: a quarter of the float32 copy numpy would need to
        multiply them with BLAS; see core.nearest), never copied into one matrix. `partial`: while the
        meaning index is unfinished, the rows written so far (see `partial_nearest`). DenseUnavailable
        when it is not complete and not `partial` (core.meaning_writer computes it)."""
        if partial and not self.has_meaning(name):
            return self.partial_nearest(name)
        if name not in self._nearest:
            if any(name not in seg.nearest_rows for seg in self.segments):
                rows = self.segment_rows(name)
                if any(r is None for r in rows):
                    raise DenseUnavailable(f"the meaning index ({name}) is not complete")
                for seg, r in zip(self.segments, rows):
                    if name not in seg.nearest_rows:
                        seg.nearest_rows[name] = NearestRows(r)
            parts = [seg.nearest_rows[name] for seg in self.segments]
            self._nearest[name] = SegmentedNearest(parts, self.layout.chunk_remap)
        return self._nearest[name]

    def partial_nearest(self, name: str) -> SegmentedNearest:
        """The rows of an unfinished meaning index written so far, for searching while another process
        embeds the rest (newest notes first): quantized again once another PARTIAL_RENEW of the chunks
        is written (0.3–0.8 s at 180,000 chunks, in C without the GIL). DenseUnavailable when none is."""
        done = self.meaning_progress(name)[0]
        if not done:
            raise DenseUnavailable("no chunk is embedded yet")
        cached = self._partial.get(name)
        if cached is None or done - cached[0] >= max(1, int(PARTIAL_RENEW * self.n_chunks)):
            parts = []
            for seg in self.segments:
                if name not in seg.nearest_rows and (complete := embeddings.load_rows(seg, name)) is not None:
                    seg.nearest_rows[name] = NearestRows(complete)  # kept with the segment, as `nearest` does
                if name in seg.nearest_rows:  # complete (a refresh's delta, often): quantized once, not per renewal
                    parts.append(seg.nearest_rows[name])
                    continue
                found = embeddings.embedded_rows(seg, name)  # the bits first: the rows they name are flushed
                none = (np.zeros((seg.n_chunks, 0), np.float16), np.zeros(seg.n_chunks, bool))
                parts.append(NearestRows(*(found if found is not None else none)))
            written = self.layout.per_chunk(
                [p.written if p.written is not None else np.ones(len(p.rows), bool) for p in parts]
            )
            cached = self._partial[name] = (done, SegmentedNearest(parts, self.layout.chunk_remap, written))
        return cached[1]
