"""The search worker: answers queries, ranks under each analyzer and why-not questions on its own
thread, against the index the window shows (replaced only once a build has published a new one)."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal, Slot

from ..core.analyzers import ANALYZERS, AnalyzerConfig
from ..core.dense import DEFAULT_EMBEDDER, Embedder, load_embedder
from ..core.errors import RagdeskError
from ..core.excerpts import Excerpt
from ..core.explain import TermRow
from ..core.injection import Finding
from ..core.injection_probe import PROBE_HITS, InjectionProbe, with_probe
from ..core.modes import AUTO, Resolved, resolve
from ..core.params import SearchParams
from ..core.query import Query, parse
from ..core.query_mask import filter_values
from ..core.reader import IndexReader
from ..core.results import Hit, SearchResult
from ..core.store import IndexMissing
from ..core.walk import count_other_files
from ..core.whynot import why_not
from .texts import NOT_DERIVED


@dataclass(frozen=True)
class SearchRequest:
    """One query with its parameters; `serial` lets the worker drop requests that were overtaken.
    `mode` is the Mode switch's request (auto, bm25, dense or hybrid): resolved per search
    (core.modes.resolve), it replaces `params.mode`."""

    serial: int
    query: str
    params: SearchParams  # every chunk in its own place (group=False): the list groups when asked
    pinned: int | None = None  # chunk id pinned for comparison
    mode: str = AUTO
    embedder: str = DEFAULT_EMBEDDER  # which embedding model dense and hybrid use

    @property
    def analyzer(self) -> AnalyzerConfig:
        return self.params.analyzer

    @cached_property
    def parsed(self) -> Query:
        """The query parsed once (core.query): what the search, highlights, counts and ranks read."""
        return parse(self.query)


@dataclass
class SearchOutcome:
    request: SearchRequest
    result: SearchResult
    highlights: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)  # chunk id -> spans
    stale: set[int] = field(default_factory=set)
    findings: dict[int, list[Finding]] = field(default_factory=dict)  # chunk id -> instruction-like passages
    masked: dict[int, Hit] = field(default_factory=dict)  # chunk id -> the hit with its secrets masked (shown)
    total: int = 0  # chunks matching any query term (the list shows the first k)
    pinned_rows: list[TermRow] = field(default_factory=list)
    pinned_score: float = 0.0
    library: IndexReader | None = None
    meaning: tuple[int, int] | None = None  # auto, the meaning index unfinished: chunks embedded so far, of all
    other_files: int = 0  # a folder without notes: how many other files it holds (counted here, not in the window)


Slot_ = TypeVar("Slot_", bound=Callable[..., None])


def guarded(failed: str, leading: Callable[..., tuple[Any, ...]] = lambda *_: ()) -> Callable[[Slot_], Slot_]:
    """A slot whose every exception is printed and emitted on the signal named `failed` (after
    `leading(*the slot's arguments)`), so no one waits forever on an answer that never comes
    (superqt's worker pattern): one rule for every slot, not a list of exceptions per slot."""

    def wrap(slot: Slot_) -> Slot_:
        @functools.wraps(slot)
        def run(self: SearchWorker, *args: Any) -> None:
            try:
                slot(self, *args)
            except Exception as exc:  # reported on the signal: the window says it or rebuilds
                if not isinstance(exc, RagdeskError):  # ours say what happened in their message
                    traceback.print_exc()
                getattr(self, failed).emit(*leading(*args), exc)

        return run  # type: ignore[return-value]

    return wrap


class SearchWorker(QObject):
    """Answers queries against the current library; always works on the latest request only. Each
    slot's failure is its failure signal's, with the exception (`guarded`)."""

    search_finished = Signal(object)  # SearchOutcome
    ranks_found = Signal(int, int, object)  # serial, chunk id, {analyzer name: rank, None or NOT_DERIVED}
    ranks_failed = Signal(int, int, object)  # serial, chunk id, the exception (IndexDamaged, OSError)
    why_not_found = Signal(object)  # core.whynot.WhyNot
    why_not_failed = Signal(object)  # the exception: why the note cannot be explained (NotIndexed, ...)
    search_failed = Signal(object)  # the exception (core.store.IndexDamaged: the window rebuilds)
    completions_found = Signal(object)  # {"path": [folder names], "tag": [tags]} of the current library

    def __init__(self) -> None:
        super().__init__()
        self.library: IndexReader | None = None
        self._embedders: dict[str, Embedder] = {}
        self._others: tuple[IndexReader, int] | None = None  # the last index without notes, its other files
        self.latest_serial = 0  # written by the GUI thread, read here (a plain int: atomic under the GIL)

    def _embedder(self, spec: str) -> Embedder:
        """Load the embedding model once per spec, in this thread (raises DenseUnavailable when missing)."""
        if spec not in self._embedders:
            self._embedders[spec] = load_embedder(spec)
        return self._embedders[spec]

    def _resolve(self, request: SearchRequest, lib: IndexReader) -> Resolved:
        """The search the request runs (core.modes.resolve). The meaning index is computed by the
        build process, never in the window's: until it is complete, auto and hybrid search the chunks
        embedded so far (with BM25's top few embedded for the search) and dense those alone."""
        return resolve(lib, request.mode, request.embedder, partial=True, load=self._embedder)

    def _other_files(self, lib: IndexReader) -> int:
        """Files of a folder without notes that are not notes, counted once per index: a walk of up to
        100,000 files, which froze the window on every keystroke while it ran in the GUI thread."""
        if self._others is None or self._others[0] is not lib:
            self._others = (lib, count_other_files(lib.folder, lib.settings.load.extensions))
        return self._others[1]

    @Slot(object)
    def set_library(self, library: IndexReader) -> None:
        self.library = library

    @Slot()
    @guarded("search_failed")
    def find_completions(self) -> None:
        """The folder names and tags `path:` and `tag:` complete with (from the note table)."""
        if self.library is not None:
            self.completions_found.emit(filter_values(self.library.note_facts()))

    @Slot(object)
    @guarded("search_failed")
    def search(self, request: SearchRequest) -> None:
        if request.serial < self.latest_serial or self.library is None:
            return
        lib = self.library
        lib.warm(request.analyzer, apart=True)  # another analyzer's index: derived apart, not under the GIL
        resolved = self._resolve(request, lib)
        mode = resolved.mode
        result = lib.search(request.parsed, request.params, resolved=resolved)
        if request.mode not in (mode, AUTO) and result.reason is None:
            result.reason = f"{resolved.reason}: BM25 results shown instead of {request.mode}"
        searcher, query = lib.searcher, request.parsed
        highlights = {h.chunk_id: searcher.highlight_spans(h.text, query, request.analyzer) for h in result.hits}
        stale = {h.chunk_id for h in result.hits if lib.is_stale(h.chunk_id)}
        # found here, not in the GUI thread: ~1 ms per non-ASCII chunk
        findings = {h.chunk_id: f for h in result.hits if (f := Excerpt.of(h).findings)}
        probe = InjectionProbe.for_embedder(resolved.embedder)
        if probe is not None:  # by meaning too, the hits a prompt takes first (~6 ms a new sentence)
            top = result.hits[:PROBE_HITS]
            found = with_probe([findings.get(h.chunk_id, []) for h in top], [h.text for h in top], probe)
            findings.update({h.chunk_id: f for h, f in zip(top, found) if f})
        masked = {h.chunk_id: m for h in result.hits if (m := h.masked()) is not None}
        total = len(result.hits) if mode.uses_meaning else searcher.count_matches(query, request.analyzer)
        outcome = SearchOutcome(request, result, highlights, stale, findings, masked, total, library=lib)
        outcome.meaning = resolved.meaning
        if not lib.note_paths:
            outcome.other_files = self._other_files(lib)
        if request.pinned is not None and request.pinned < lib.n_chunks:
            outcome.pinned_rows = searcher.explain(
                query, request.pinned, request.analyzer, request.params.k1, request.params.b
            )
            outcome.pinned_score = sum(r.contribution for r in outcome.pinned_rows)
        self.search_finished.emit(outcome)

    @Slot(object, str)
    @guarded("why_not_failed")
    def explain_note(self, request: SearchRequest, path: str) -> None:
        """Why the note at `path` is not higher for the request's query (see core.whynot); an OSError
        (a note table unreadable) ended nowhere and the dialog waited forever."""
        if self.library is None:
            raise IndexMissing("no index is open")
        resolved = self._resolve(request, self.library)
        params = replace(request.params, mode=resolved.mode)
        self.why_not_found.emit(why_not(self.library, request.parsed, path, params, resolved.embedder, True))

    @Slot(object, int)
    @guarded("ranks_failed", lambda request, chunk_id: (request.serial, chunk_id))
    def find_ranks(self, request: SearchRequest, chunk_id: int) -> None:
        """The chunk's rank under each analyzer (same query, k1, b)."""
        if request.serial < self.latest_serial or self.library is None:
            return
        ranks: dict[str, int | None] = {}
        for name in ANALYZERS:
            if request.serial < self.latest_serial:
                return
            config = request.analyzer.with_name(name)
            if not self.library.ready(config):  # the build process derives it after the next build
                ranks[name] = NOT_DERIVED
                continue
            params = request.params
            ranks[name] = self.library.searcher.rank_of(request.parsed, chunk_id, config, params.k1, params.b)
        self.ranks_found.emit(request.serial, chunk_id, ranks)
