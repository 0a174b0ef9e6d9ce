"""A parsed query's constraints as a chunk mask: the note filters (path, ext, tag, title, dates) and
the phrases and words a chunk must or must not hold. The mask is given to the exact top k and to the
dense ranking (core.search), so a filtered top k is exact, never a short list filtered afterwards.

Phrases are checked on the chunk's indexed text (its title and headings, then its text) after the
analyzer's normalization (case; accents when the index folds them): the term index narrows the
chunks to those holding every word's terms, and the text decides.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .analyzers import Analyzer, fold_accents, normalize, word_tokens
from .chunking import note_title
from .loader import HASHTAGS, hashtags
from .postings import MergedTermIndex, TermIndex
from .query import Clause, Filter, Query
from .tokenize import NoteRecord

Lookup = tuple[Analyzer, "TermIndex | MergedTermIndex"]  # an analyzer and its term index
MASKS_KEPT = 64  # clause masks kept per index: typing a query asks for the same ones again
_FM_DATE = re.compile(r"^(?:date|created)\s*:\s*['\"]?(\d{4})-(\d{1,2})-(\d{1,2})", re.M)


class MaskedIndex(Protocol):
    """What the mask reads of an index (an IndexReader provides it)."""

    note_paths: list[str]
    notes: Sequence[NoteRecord]
    chunk_note: np.ndarray
    note_first_chunk: np.ndarray

    @property
    def n_chunks(self) -> int: ...

    def note_text(self, note_idx: int) -> str: ...

    def note_slice(self, note_idx: int, start: int, end: int) -> str: ...

    def chunk_texts(self, chunk_ids: Sequence[int] | None = None) -> list[str]: ...


def folded(text: str) -> str:
    """How paths, tags and titles compare: NFC, case and accents folded."""
    return fold_accents(normalize(text).casefold())


class NoteFacts:
    """Per note of one index, what filters read: folded paths, types, titles, tags and dates, each
    computed on first use and kept (an index is read-only), and the masks of recent clauses."""

    def __init__(self, index: MaskedIndex) -> None:
        self.index = index
        self._paths: list[tuple[str, tuple[str, ...]]] | None = None
        self._tags: list[frozenset[str]] | None = None
        self._dates: np.ndarray | None = None
        self._titles: list[frozenset[str]] | None = None
        self.clause_masks: OrderedDict[tuple[str, bool, bool], np.ndarray] = OrderedDict()
        self.query_masks: OrderedDict[tuple[object, ...], np.ndarray] = OrderedDict()  # see chunk_mask

    # ---- per note --------------------------------------------------------------------------
    def paths(self) -> list[tuple[str, tuple[str, ...]]]:
        """(folded path, its folder names) per note."""
        if self._paths is None:
            out = []
            for p in self.index.note_paths:
                f = folded(p.replace("\\", "/"))
                out.append((f, tuple(f.split("/")[:-1])))
            self._paths = out
        return self._paths

    def titles(self) -> list[frozenset[str]]:
        if self._titles is None:
            notes = self.index.notes
            self._titles = [  # the title a note is shown with (front matter's) and its file name
                frozenset(re.findall(r"\w+", folded(f"{note_title(notes[i].meta, p)} {note_title({}, p)}")))
                for i, p in enumerate(self.index.note_paths)
            ]
        return self._titles

    def tags(self) -> list[frozenset[str]]:
        """Front matter's `tags` and `#tags` in the text (outside fenced code), folded, without '#'."""
        if self._tags is None:
            out = []
            for i in range(len(self.index.note_paths)):
                meta = self.index.notes[i].meta
                listed = meta.get("tags") or []
                listed = listed if isinstance(listed, list) else re.split(r"[,\s]+", str(listed))
                found = {folded(str(t).strip().lstrip("#")) for t in listed if str(t).strip().lstrip("#")}
                inline = meta.get(HASHTAGS)  # found as the note was read; an older index: read now
                inline = inline if isinstance(inline, list) else hashtags(self.index.note_text(i))
                found.update(folded(str(t)) for t in inline)
                out.append(frozenset(t.rstrip("/") for t in found))
            self._tags = out
        return self._tags

    def dates(self) -> np.ndarray:
        """Local epoch seconds per note: front matter's `date` or `created`, else the modified time."""
        if self._dates is None:
            self._dates = np.fromiter(
                (self.date_of(i) for i in range(len(self.index.note_paths))), np.float64, len(self.index.note_paths)
            )
        return self._dates

    def date_of(self, note_idx: int) -> float:
        """One note's date as `dates` has it (a hit's, without computing every note's)."""
        if self._dates is not None:
            return float(self._dates[note_idx])
        note = self.index.notes[note_idx]
        keys = note.meta.get("_keys") or []
        if "date" in keys or "created" in keys:  # read from the note's front matter as stored
            m = _FM_DATE.search(self.index.note_slice(note_idx, 0, max(note.body_start, 0)))
            if m:
                try:
                    return dt.datetime(*(int(g) for g in m.groups())).timestamp()
                except ValueError:  # "2025-02-30": the modified time
                    pass
        return note.mtime_ns / 1e9

    # ---- filters ---------------------------------------------------------------------------
    def note_mask(self, filters: Sequence[Filter]) -> np.ndarray:
        """Notes passing every field's filters (repeated values of a field: any of them)."""
        keep = np.ones(len(self.index.note_paths), dtype=bool)
        by: dict[tuple[str, bool], list[Filter]] = {}
        for f in filters:
            by.setdefault((f.field, f.negated), []).append(f)
        for (_, negated), fs in by.items():
            hit = np.zeros_like(keep)
            for f in fs:
                hit |= self._one(f)
            keep &= ~hit if negated else hit
        return keep

    def _one(self, f: Filter) -> np.ndarray:
        n = len(self.index.note_paths)
        value = folded(f.value.replace("\\", "/"))
        if f.field == "path":
            want = tuple(p for p in value.strip("/").split("/") if p)
            w = len(want)
            return np.fromiter(
                (
                    path.startswith(value.lstrip("/"))
                    or any(dirs[i : i + w] == want for i in range(len(dirs) - w + 1))
                    for path, dirs in self.paths()
                ),
                bool,
                n,
            )
        if f.field == "ext":
            ext = "." + value.lstrip(".").lstrip("*.")
            return np.fromiter((path.endswith(ext) for path, _ in self.paths()), bool, n)
        if f.field == "tag":
            tag = value.lstrip("#").rstrip("/")
            return np.fromiter((any(t == tag or t.startswith(tag + "/") for t in ts) for ts in self.tags()), bool, n)
        if f.field == "title":
            words = set(re.findall(r"\w+", value))
            return np.fromiter((words <= t for t in self.titles()), bool, n)
        start, end = f.period()
        dates = self.dates()
        return dates >= end if f.field == "after" else dates < start


def chunk_mask(query: Query, facts: NoteFacts, lookups: Sequence[Lookup]) -> np.ndarray | None:
    """The chunks `query` lets through (None: all of them). Kept per query's constraints (typing more
    words keeps the filters; Show more and a re-search ask again): the ranking then pays nothing for
    them but the kernel's skipping."""
    if query.plain:
        return None
    key = (query.filters, query.required, query.excluded, lookups[0][0].config.fold_accents)
    kept = facts.query_masks.get(key)
    if kept is not None:
        facts.query_masks.move_to_end(key)
        return kept
    keep = _compute_mask(query, facts, lookups)
    keep.flags.writeable = False  # shared by every search that asks for it
    facts.query_masks[key] = keep
    while len(facts.query_masks) > MASKS_KEPT:
        facts.query_masks.popitem(last=False)
    return keep


def _compute_mask(query: Query, facts: NoteFacts, lookups: Sequence[Lookup]) -> np.ndarray:
    keep = np.ones(facts.index.n_chunks, dtype=bool)
    if query.filters:
        keep &= facts.note_mask(query.filters)[np.asarray(facts.index.chunk_note)]
    for group in query.required:
        hit = np.zeros_like(keep)
        for clause in group:
            hit |= holding(clause, facts, lookups, within=keep)
        keep &= hit
    for clause in query.excluded:
        keep &= ~holding(clause, facts, lookups, within=keep)
    return keep


def holding(
    clause: Clause, facts: NoteFacts, lookups: Sequence[Lookup], within: np.ndarray | None = None
) -> np.ndarray:
    """Chunks whose indexed text holds the clause's words adjacent and in order (a mask over chunks).

    Kept per clause when computed over every chunk; `within` narrows the texts read (chunks outside
    it are reported as not holding the clause, which no caller asks about)."""
    fold = lookups[0][0].config.fold_accents
    key = (clause.text, clause.phrase, fold)
    cached = facts.clause_masks.get(key)
    if cached is not None:
        facts.clause_masks.move_to_end(key)
        return cached
    words = _words(clause.text, fold)
    index, n = facts.index, facts.index.n_chunks
    candidates = np.ones(n, dtype=bool)
    exact = False  # one word whose term only that word makes: its postings are the answer
    for analyzer, terms in lookups:
        for word in words:
            found = analyzer.terms_of_word(word)
            for term in found:
                tid = terms.term_id(term)
                has = np.zeros(n, dtype=bool)
                if tid is not None:
                    docs, _ = terms.postings(tid)
                    has[np.asarray(docs)] = True
                candidates &= has
            exact |= len(words) == 1 and bool(found) and _only_word(analyzer, word)
    narrowed = within is not None and not within.all()
    if narrowed:
        candidates &= within  # type: ignore[operator]
    if exact or not words:
        out = candidates if words else np.zeros(n, dtype=bool)
    else:
        out = np.zeros(n, dtype=bool)
        ids = np.flatnonzero(candidates)
        needle = " " + " ".join(words) + " "
        for cid, text in zip(ids.tolist(), index.chunk_texts(ids.tolist())):
            if needle in " " + " ".join(_words(text, fold)) + " ":
                out[cid] = True
    if not narrowed:
        facts.clause_masks[key] = out
        while len(facts.clause_masks) > MASKS_KEPT:
            facts.clause_masks.popitem(last=False)
    return out


def _only_word(analyzer: Analyzer, word: str) -> bool:
    """Whether `word`'s term in this analyzer's index comes from that word alone: the words index, or
    a word shorter than the stem length (a 5-letter stem is only ever its own word when shorter)."""
    name = analyzer.config.name
    return name == "words" or (name == "stems" and len(word) < analyzer.config.stem_length)


def _words(text: str, fold: bool) -> list[str]:
    """`text`'s words as the index reads them (NFC, casefolded), accents folded when it folds them."""
    words = word_tokens(normalize(text))
    return [fold_accents(w) for w in words] if fold else words


def why_left_out(query: Query, facts: NoteFacts, lookups: Sequence[Lookup], note: int) -> list[str]:
    """What in `query` leaves every chunk of note `note` out (for why-not), one phrase each; [] when
    some chunk passes."""
    first, end = int(facts.index.note_first_chunk[note]), int(facts.index.note_first_chunk[note + 1])
    out = [f"{f.shown()} leaves its note out" for f in query.filters if not facts.note_mask([f])[note]]
    for group in query.required:
        held = np.zeros(end - first, dtype=bool)
        for clause in group:
            held |= holding(clause, facts, lookups)[first:end]
        if not held.any():
            out.append(f"no chunk of it holds {' or '.join(c.shown() for c in group)}")
    for clause in query.excluded:
        if holding(clause, facts, lookups)[first:end].all():
            out.append(f"every chunk of it holds {clause.shown()}, which -{clause.shown()} leaves out")
    if not out:
        mask = chunk_mask(query, facts, lookups)
        if mask is not None and not mask[first:end].any():
            out.append("no chunk of it passes " + query.searched_as())
    return out


def filter_values(facts: NoteFacts) -> dict[str, list[str]]:
    """What `path:` and `tag:` can be completed with: every folder name (as written) and every tag
    of the index, sorted, quoted when they hold a space."""
    folders: set[str] = set()
    for path in facts.index.note_paths:
        folders.update(path.replace("\\", "/").split("/")[:-1])
    tags = set().union(*facts.tags()) if facts.index.note_paths else set()

    def quoted(value: str) -> str:
        return f'"{value}"' if any(c.isspace() for c in value) else value

    return {
        "path": sorted((quoted(f) for f in folders if f), key=str.casefold),
        "tag": sorted(quoted(t) for t in tags),
    }
