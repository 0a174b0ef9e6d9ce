"""Splitting notes into chunks with exact line numbers and character spans.

`words` reproduces the seed's recipe (plain word windows); `markdown` follows the
note's structure: headings, paragraphs and code blocks, packed up to `size` words.
A chunk's text is always a slice of the note's text, so spans and lines stay exact.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import numpy as np

from .loader import Note

CHUNKERS = ("markdown", "words")
HEADING_SEP = " › "
_NONSPACE = re.compile(r"\S+")
_ATX = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_ORG_HEADING = re.compile(r"^(\*{1,6})[ \t]+(.*)$")


@dataclass(frozen=True)
class ChunkOptions:
    """How notes are cut: chunker name, target words per chunk, words shared by neighbours."""

    chunker: str = "markdown"
    size: int = 80
    overlap: int = 20
    context: bool = True  # markdown only: also index the note's title and the chunk's heading trail with it

    def __post_init__(self) -> None:
        if self.chunker not in CHUNKERS:
            raise ValueError(f"unknown chunker {self.chunker!r}; choose one of {', '.join(CHUNKERS)}")
        if self.size < 1:
            raise ValueError("chunk size must be at least 1 word")
        if not 0 <= self.overlap < self.size:
            raise ValueError("overlap must be at least 0 and smaller than the chunk size")

    @property
    def key(self) -> str:
        return f"{self.chunker}-{self.size}-{self.overlap}" + ("-ctx" if self.indexes_context else "")

    @property
    def indexes_context(self) -> bool:
        """The `words` chunker reproduces the seed's recipe exactly, so it never adds context."""
        return self.context and self.chunker == "markdown"


@dataclass
class Chunk:
    """A passage of a note: where it is (path, heading trail, lines, span) and its text."""

    path: str
    heading: str
    start_line: int  # 1-based, inclusive
    end_line: int
    start: int  # character span in the note's text
    end: int
    text: str


class _Lines:
    """Maps character offsets to 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


_SPACE_LUT = np.zeros(0x3002, dtype=bool)
_SPACE_LUT[[c for c in range(0x3001) if chr(c).isspace()]] = True  # index 0x3001: "anything above"


def _word_spans(text: str, start: int, end: int) -> tuple[list[int], list[int]]:
    """Start and end offsets of the whitespace-separated words in text[start:end] (vectorized)."""
    cp = np.frombuffer(text[start:end].encode("utf-32-le"), dtype=np.uint32)
    word = ~_SPACE_LUT[np.minimum(cp, 0x3001)]
    edges = np.diff(np.concatenate(([False], word, [False])).astype(np.int8))
    return (np.flatnonzero(edges == 1) + start).tolist(), (np.flatnonzero(edges == -1) + start).tolist()


def _windows(n_words: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Word windows as (first word index, last word index + 1)."""
    out: list[tuple[int, int]] = []
    step = size - overlap
    i = 0
    while i < n_words:
        j = min(i + size, n_words)
        out.append((i, j))
        if j == n_words:
            break
        i += step
    return out


def _make(note: Note, lines: _Lines, heading: str, start: int, end: int) -> Chunk:
    return Chunk(
        path=note.path,
        heading=heading,
        start_line=lines.line_of(start),
        end_line=lines.line_of(max(start, end - 1)),
        start=start,
        end=end,
        text=note.text[start:end],
    )


def chunk_words(note: Note, options: ChunkOptions) -> list[Chunk]:
    """The seed's recipe: windows of `size` whitespace words, `overlap` shared, nothing added."""
    lines = _Lines(note.text)
    starts, ends = _word_spans(note.text, note.body_start, len(note.text))
    return [
        _make(note, lines, "", starts[i], ends[j - 1]) for i, j in _windows(len(starts), options.size, options.overlap)
    ]


@dataclass
class _Block:
    start: int
    end: int
    words: int
    heading: tuple[str, ...]
    is_heading: bool = False


def _blocks(note: Note) -> list[_Block]:
    """Paragraphs, headings and fenced code blocks of the body, each with its heading trail."""
    text = note.text
    blocks: list[_Block] = []
    trail: list[tuple[int, str]] = []
    trail_t: tuple[str, ...] = ()
    heading_re, heading_char = (_ORG_HEADING, "*") if note.path.lower().endswith(".org") else (_ATX, "#")
    para_start: int | None = None
    fence: str | None = None
    fence_start = 0

    def close_para(end: int) -> None:
        nonlocal para_start
        if para_start is not None:
            while end > para_start and text[end - 1].isspace():
                end -= 1
            n = len(text[para_start:end].split())
            if n:
                blocks.append(_Block(para_start, end, n, trail_t))
            para_start = None

    pos = note.body_start
    for line in text[pos:].split("\n"):
        line_end = pos + len(line)
        stripped = line.lstrip()
        if fence is not None:
            if stripped.startswith(fence):
                blocks.append(_Block(fence_start, line_end, len(text[fence_start:line_end].split()), trail_t))
                fence = None
        elif stripped[:1] in ("`", "~") and len(line) - len(stripped) <= 3 and (fm := _FENCE.match(line)):
            close_para(pos)
            fence, fence_start = fm.group(1)[:3], pos
        elif line[:1] == heading_char and (hm := heading_re.match(line)):
            close_para(pos)
            level = len(hm.group(1))
            while trail and trail[-1][0] >= level:
                trail.pop()
            trail.append((level, hm.group(2).strip()))
            trail_t = tuple(t for _, t in trail)
            blocks.append(_Block(pos, line_end, len(line.split()), trail_t, True))
        elif not stripped:
            close_para(pos)
        elif para_start is None:
            para_start = pos
        pos = line_end + 1
    if fence is not None:  # unclosed fence: keep it as a block to the end
        blocks.append(_Block(fence_start, len(text), len(text[fence_start:].split()), trail_t))
    close_para(len(text))
    return blocks


def chunk_markdown(note: Note, options: ChunkOptions) -> list[Chunk]:
    """Structure-aware chunks: sections start new chunks; whole paragraphs are packed to `size` words."""
    lines = _Lines(note.text)
    size, overlap = options.size, options.overlap
    chunks: list[Chunk] = []
    cur: list[_Block] = []
    cur_words = 0

    def emit() -> None:
        nonlocal cur, cur_words
        if cur and not all(b.is_heading for b in cur):
            chunks.append(_make(note, lines, HEADING_SEP.join(cur[-1].heading), cur[0].start, cur[-1].end))
        cur, cur_words = [], 0

    def overlap_start(section: tuple[str, ...]) -> int | None:
        """Start of the last `overlap` words of the previous chunk, if it is in the same section."""
        if not overlap or not chunks or not cur or chunks[-1].heading != HEADING_SEP.join(section):
            return None
        prev = chunks[-1]
        parts = prev.text.rsplit(None, overlap)
        if len(parts) <= overlap:
            return None
        tail = _NONSPACE.search(prev.text, len(parts[0]))
        return prev.start + tail.start() if tail else None

    for block in _blocks(note):
        if block.is_heading:
            # Headings open a new chunk, unless the chunk so far holds only headings.
            if cur and not all(b.is_heading for b in cur):
                emit()
            cur.append(block)
            cur_words += block.words
            continue
        if block.words > size:
            # Over-long paragraph (or code block): flush, then cut into overlapping windows.
            pending_headings = cur if all(b.is_heading for b in cur) else []
            if not pending_headings:
                emit()
            starts, ends = _word_spans(note.text, block.start, block.end)
            head_words = sum(b.words for b in pending_headings)
            first_size = max(size - head_words, 1)
            start0 = pending_headings[0].start if pending_headings else None
            i, first = 0, True
            while i < len(starts):
                n = first_size if first else size
                j = min(i + n, len(starts))
                s = start0 if first and start0 is not None else starts[i]
                chunks.append(_make(note, lines, HEADING_SEP.join(block.heading), s, ends[j - 1]))
                if j == len(starts):
                    break
                i = max(j - overlap, i + 1)
                first = False
            cur, cur_words = [], 0
            continue
        if cur_words + block.words > size and not all(b.is_heading for b in cur):
            section = cur[-1].heading
            emit()
            cur = [block]
            cur_words = block.words
            ov = overlap_start(section) if block.heading == section else None
            if ov is not None:
                cur.insert(0, _Block(ov, ov, overlap, section))
            continue
        cur.append(block)
        cur_words += block.words
    emit()
    return chunks


def context_text(title: str, heading: str) -> str:
    """What `context` indexes with a chunk: the note's title, then its heading trail (no repeats)."""
    parts = [title] if title else []
    for h in heading.split(HEADING_SEP) if heading else []:
        if h.casefold() not in (p.casefold() for p in parts):
            parts.append(h)
    return " \n".join(parts)


def note_title(meta: dict[str, object], path: str) -> str:
    """Front matter title, else the file name made readable ("git-undo.md" -> "git undo")."""
    title = meta.get("title")
    if title:
        return str(title)
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return stem.replace("-", " ").replace("_", " ")


def chunk_note(note: Note, options: ChunkOptions) -> list[Chunk]:
    if options.chunker == "words":
        return chunk_words(note, options)
    return chunk_markdown(note, options)
