"""Reading, chunking and word-counting a batch of notes: the part of a build that runs in workers.

A batch returns plain arrays with batch-local word ids plus its own vocabulary, so
worker processes never share state and the parent merges vocabularies in batch order
(which keeps the result deterministic whatever the number of workers).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import kernels
from .analyzers import word_tokens
from .chunking import ChunkOptions, chunk_note, context_text, note_title
from .lexicon import Words
from .loader import HASHTAGS, NoteFile, Skipped, hashtags, read_note


@dataclass
class NoteRecord:
    """What the index keeps of a note besides its chunks."""

    path: str
    size: int
    mtime_ns: int
    sha1: str
    encoding: str
    body_start: int
    meta: dict[str, object]
    n_chunks: int = 0
    indexed_at: float = 0.0  # when it was read (time.time()); reused notes keep theirs


@dataclass
class BatchResult:
    """Notes, chunks and word counts of one batch; word ids index `vocab`."""

    notes: list[NoteRecord] = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)  # UTF-8 note texts, parallel to notes
    skipped: list[Skipped] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # per chunk
    spans: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))  # per chunk, chars
    lines: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))  # per chunk, 1-based
    # the batch's words by id as one blob: thousands of strs per batch, which the build
    # holds for every batch until it interns them (938,000 strs at the scale corpus)
    vocab: Words = field(default_factory=lambda: Words(b""))
    row_len: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # distinct words per chunk
    word_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    n_tokens: int = 0


class _Vocab(dict):  # type: ignore[type-arg]
    """A dict that assigns the next id to an unseen word."""

    def __missing__(self, key: str) -> int:
        value = self[key] = len(self)
        return value


def process_batch(files: list[NoteFile], options: ChunkOptions) -> BatchResult:
    """Read, decode, chunk and count the words of `files`; problems become `skipped` entries."""
    out = BatchResult()
    now = time.time()
    spans: list[tuple[int, int]] = []
    lines: list[tuple[int, int]] = []
    # What each chunk's words are read from: its context (title and heading trail), then its text.
    pieces: list[str] = []
    bounds: list[int] = []  # (start, end) per piece
    chunk_ptr: list[int] = [0]
    for f in files:
        try:
            note, skip = read_note(f)
            chunks = chunk_note(note, options) if note is not None else []
        except Exception as exc:  # a note must never take the build down
            note, skip, chunks = (
                None,
                Skipped(f.path, f"could not be processed: {exc!r}", False, f.size, f.mtime_ns),
                [],
            )
        if skip is not None:
            out.skipped.append(skip)
        if note is None:
            continue
        meta = {**note.meta, HASHTAGS: hashtags(note.text)}  # tag: reads them here, not every note's text
        out.notes.append(
            NoteRecord(f.path, f.size, f.mtime_ns, note.sha1, note.encoding, note.body_start, meta, len(chunks), now)
        )
        out.texts.append(note.text.encode("utf-8"))
        title = note_title(note.meta, note.path) if options.indexes_context else ""
        contexts: dict[str, str] = {}  # per heading trail: a note's chunks share a few
        for c in chunks:
            if options.indexes_context:
                if c.heading not in contexts:
                    contexts[c.heading] = context_text(title, c.heading)
                context = contexts[c.heading]
                pieces.append(context)
                bounds += (0, len(context))
            pieces.append(note.text)
            bounds += (c.start, c.end)
            chunk_ptr.append(len(pieces))
            spans.append((c.start, c.end))
            lines.append((c.start_line, c.end_line))
            out.headings.append(c.heading)
    if spans:
        out.spans = np.array(spans, dtype=np.int32)
        out.lines = np.array(lines, dtype=np.int32)
    vocab, out.row_len, out.word_ids, out.counts, out.n_tokens = count_words(
        pieces, np.array(bounds, np.int64), np.array(chunk_ptr, np.int64)
    )
    out.vocab = Words("\n".join(vocab).encode("utf-8"))
    return out


def intern_words(vocab: dict[str, int], words: list[str]) -> np.ndarray:
    """The ids of `words` in `vocab` (int32), adding each unseen word with the next id, len(vocab)."""
    if kernels.TEXT is not None:
        return np.frombuffer(kernels.TEXT.intern_words(vocab, words), np.int32)
    return np.array([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int32)


def count_words(
    pieces: list[str], bounds: np.ndarray, chunk_ptr: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, int]:
    """Word counts per chunk, where chunk c reads `pieces[p][bounds[2p]:bounds[2p + 1]]` for p in
    `chunk_ptr[c]:chunk_ptr[c + 1]`: (vocabulary in first-seen order, distinct words per chunk,
    their word ids ascending within each chunk, their counts, number of tokens)."""
    if kernels.TEXT is not None:
        vocab, row_len, ids, counts, n_tokens = kernels.TEXT.count_words(pieces, bounds, chunk_ptr)
        return (
            vocab,
            np.frombuffer(row_len, np.int64),
            np.frombuffer(ids, np.int32),
            np.frombuffer(counts, np.int32),
            n_tokens,
        )
    return count_words_python(pieces, bounds, chunk_ptr)


def count_words_python(
    pieces: list[str], bounds: np.ndarray, chunk_ptr: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, int]:
    """`count_words` without the compiled kernel (same result)."""
    vocab = _Vocab()
    token_ids: list[int] = []
    chunk_tokens: list[int] = []
    b = bounds.tolist()
    ptr = chunk_ptr.tolist()
    for c in range(len(ptr) - 1):
        n = len(token_ids)
        for p in range(ptr[c], ptr[c + 1]):
            token_ids.extend(map(vocab.__getitem__, word_tokens(pieces[p][b[2 * p] : b[2 * p + 1]])))
        chunk_tokens.append(len(token_ids) - n)
    n_chunk = len(chunk_tokens)
    v = max(len(vocab), 1)
    token_chunk = np.repeat(np.arange(n_chunk, dtype=np.int64), np.array(chunk_tokens, dtype=np.int64))
    keys = token_chunk * v + np.array(token_ids, dtype=np.int64)
    uniq, counts = np.unique(keys, return_counts=True)
    row_len = np.bincount(uniq // v, minlength=n_chunk).astype(np.int64)
    return list(vocab), row_len, (uniq % v).astype(np.int32), counts.astype(np.int32), len(token_ids)
