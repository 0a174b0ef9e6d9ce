"""Reading, chunking and word-counting a batch of notes: the part of a build that runs in workers.

A batch returns plain arrays with batch-local word ids plus its own vocabulary, so
worker processes never share state and the parent merges vocabularies in batch order
(which keeps the result deterministic whatever the number of workers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .analyzers import word_tokens
from .chunking import ChunkOptions, chunk_note, context_text, note_title
from .loader import NoteFile, Skipped, read_note


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


@dataclass
class BatchResult:
    """Notes, chunks and word counts of one batch; word ids index `vocab`."""

    notes: list[NoteRecord] = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)  # UTF-8 note texts, parallel to notes
    skipped: list[Skipped] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # per chunk
    spans: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))  # per chunk, chars
    lines: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))  # per chunk, 1-based
    vocab: list[str] = field(default_factory=list)
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
    vocab = _Vocab()
    spans: list[tuple[int, int]] = []
    lines: list[tuple[int, int]] = []
    token_ids: list[int] = []
    chunk_tokens: list[int] = []  # tokens per chunk
    n_chunk = 0
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
        out.notes.append(
            NoteRecord(f.path, f.size, f.mtime_ns, note.sha1, note.encoding, note.body_start, note.meta, len(chunks))
        )
        out.texts.append(note.text.encode("utf-8"))
        title = note_title(note.meta, note.path) if options.indexes_context else ""
        context_words: dict[str, list[str]] = {}  # per heading trail: a note's chunks share a few
        for c in chunks:
            words = word_tokens(c.text)
            if options.indexes_context:
                if c.heading not in context_words:
                    context_words[c.heading] = word_tokens(context_text(title, c.heading))
                words = context_words[c.heading] + words
            token_ids.extend(map(vocab.__getitem__, words))
            chunk_tokens.append(len(words))
            spans.append((c.start, c.end))
            lines.append((c.start_line, c.end_line))
            out.headings.append(c.heading)
            n_chunk += 1
    out.vocab = list(vocab)
    out.n_tokens = len(token_ids)
    if spans:
        out.spans = np.array(spans, dtype=np.int32)
        out.lines = np.array(lines, dtype=np.int32)
    v = max(len(vocab), 1)
    token_chunk = np.repeat(np.arange(n_chunk, dtype=np.int64), np.array(chunk_tokens, dtype=np.int64))
    keys = token_chunk * v + np.array(token_ids, dtype=np.int64)
    uniq, counts = np.unique(keys, return_counts=True)
    out.row_len = np.bincount(uniq // v, minlength=n_chunk).astype(np.int64)
    out.word_ids = (uniq % v).astype(np.int32)
    out.counts = counts.astype(np.int32)
    return out
