"""Splitting notes into chunks with exact line numbers and character spans.

`words` is the baseline recipe (plain windows of whitespace words); `markdown` follows the
note's structure: headings, paragraphs and code blocks, packed up to `size` words.
A chunk's text is always a slice of the note's text, so spans and lines stay exact.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import numpy as np

from . import kernels
from .arrays import ranges
from .loader import Note

CHUNKERS = ("markdown", "words")
HEADING_SEP = " › "
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
    # markdown only: a chunk ends no earlier than this share of `size` words. Near-uniform lengths
    # (0.9) found more answers on every question set than cutting at any heading or paragraph
    # past half the size (0.5), which keeps sections whole more often (tests/benchmarks/tune_defaults.py).
    min_fill: float = 0.9

    def __post_init__(self) -> None:
        if self.chunker not in CHUNKERS:
            raise ValueError(f"unknown chunker {self.chunker!r}; choose one of {', '.join(CHUNKERS)}")
        if self.size < 1:
            raise ValueError("chunk size must be at least 1 word")
        if not 0 <= self.overlap < self.size:
            raise ValueError("overlap must be at least 0 and smaller than the chunk size")
        if not 0 < self.min_fill <= 1:
            raise ValueError("the shortest chunk must be more than 0 and at most 1 times the chunk size")

    @property
    def key(self) -> str:
        fill = f"-fill{self.min_fill:g}" if self.chunker == "markdown" else ""
        return f"{self.chunker}-{self.size}-{self.overlap}{fill}" + ("-ctx" if self.indexes_context else "")

    @property
    def indexes_context(self) -> bool:
        """The `words` chunker is the plain word-window baseline, so it never adds context."""
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
    page: int | None = None  # a PDF's page where the chunk starts (set when read from an index)


class _Lines:
    """Maps character offsets to 1-based line numbers, counting newlines from the last offset asked
    (chunks come in order, so a note's newlines are counted about once, in C)."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def line_of(self, offset: int) -> int:
        if offset >= self.pos:
            self.line += self.text.count("\n", self.pos, offset)
        else:
            self.line -= self.text.count("\n", offset, self.pos)
        self.pos = offset
        return self.line


_SPACE_LUT = np.zeros(0x3002, dtype=bool)
_SPACE_LUT[[c for c in range(0x3001) if chr(c).isspace()]] = True  # index 0x3001: "anything above"


def _body_code_points(note: Note) -> np.ndarray:
    """The code points of the note's body (after front matter), one array element each."""
    return np.frombuffer(note.text[note.body_start :].encode("utf-32-le"), dtype=np.uint32)


def _word_spans(cp: np.ndarray, offset: int) -> tuple[list[int], list[int]]:
    """Start and end offsets (from `offset`) of the whitespace-separated words in the code points `cp`."""
    word = ~_SPACE_LUT[np.minimum(cp, 0x3001)]
    edges = np.diff(np.concatenate(([False], word, [False])).astype(np.int8))
    return (np.flatnonzero(edges == 1) + offset).tolist(), (np.flatnonzero(edges == -1) + offset).tolist()


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
    """The baseline recipe: windows of `size` whitespace words, `overlap` shared, nothing added."""
    lines = _Lines(note.text)
    starts, ends = _word_spans(_body_code_points(note), note.body_start)
    return [
        _make(note, lines, "", starts[i], ends[j - 1]) for i, j in _windows(len(starts), options.size, options.overlap)
    ]


@dataclass
class _Block:
    start: int
    end: int
    heading: tuple[str, ...]
    is_heading: bool = False
    is_code: bool = False


def _is_org(note: Note) -> bool:
    """Org-mode headings are `* Title`; markdown's (every other note type) are `# Title`."""
    return note.path.lower().endswith(".org")


def _blocks(note: Note) -> list[_Block]:
    """Paragraphs, headings and fenced code blocks of the body, each with its heading trail."""
    text = note.text
    blocks: list[_Block] = []
    trail: list[tuple[int, str]] = []
    trail_t: tuple[str, ...] = ()
    heading_re, heading_char = (_ORG_HEADING, "*") if _is_org(note) else (_ATX, "#")
    para_start: int | None = None
    fence: str | None = None
    fence_start = 0

    def close_para(end: int) -> None:
        nonlocal para_start
        if para_start is not None:
            while end > para_start and text[end - 1].isspace():
                end -= 1
            if end > para_start:
                blocks.append(_Block(para_start, end, trail_t))
            para_start = None

    pos = note.body_start
    for line in text[pos:].split("\n"):
        line_end = pos + len(line)
        stripped = line.lstrip()
        if fence is not None:
            if stripped.startswith(fence):
                blocks.append(_Block(fence_start, line_end, trail_t, is_code=True))
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
            blocks.append(_Block(pos, line_end, trail_t, is_heading=True))
        elif not stripped:
            if para_start is not None:  # most blank lines follow a blank line or a block: skip the call
                close_para(pos)
        elif para_start is None:
            para_start = pos
        pos = line_end + 1
    if fence is not None:  # unclosed fence: keep it as a block to the end
        blocks.append(_Block(fence_start, len(text), trail_t, is_code=True))
    close_para(len(text))
    return blocks


# Break strengths before a word: where a chunk may end. Higher is preferred; ties go to the later word.
_BREAK_SENTENCE, _BREAK_BLOCK, _BREAK_HEADING = 1, 2, 3
_SENTENCE_END = np.zeros(128, dtype=bool)  # indexed by code point (ASCII; anything above is not an end)
_SENTENCE_END[[ord(c) for c in ".!?:;"]] = True


def _break_points(cp: np.ndarray, offset: int, starts: list[int], ends: list[int], blocks: list[_Block]) -> np.ndarray:
    """For each word, how good a chunk boundary just before it is (0 = mid-sentence).

    `cp` are the body's code points (see `_body_code_points`), starting at text offset `offset`.
    """
    score = np.zeros(len(starts), dtype=np.int8)
    last = cp[np.asarray(ends[:-1], dtype=np.int64) - 1 - offset]
    score[1:][_SENTENCE_END[np.minimum(last, 127)]] = _BREAK_SENTENCE
    if blocks:
        word_starts = np.asarray(starts)
        first = np.searchsorted(word_starts, [b.start for b in blocks])
        last = np.searchsorted(word_starts, [b.end for b in blocks])
        inside = first < len(starts)
        heading = np.array([b.is_heading for b in blocks])
        score[first[inside]] = np.where(heading[inside], _BREAK_HEADING, _BREAK_BLOCK)
        code = [i for i, b in enumerate(blocks) if b.is_code and inside[i]]
        if code:  # never cut inside a code block if a better place exists
            score[ranges(first[code] + 1, np.maximum(last[code] - first[code] - 1, 0))] = 0
    return score


def _trail_at(blocks: list[_Block], block_ends: list[int], start: int, end: int) -> tuple[str, ...]:
    """A chunk's heading trail: that of its first text (not heading) block, else of its first heading."""
    first_heading: tuple[str, ...] = ()
    for b in blocks[bisect.bisect_right(block_ends, start) :]:
        if b.start >= end:
            break
        if not b.is_heading and b.heading:
            return b.heading
        if b.is_heading and not first_heading:
            first_heading = b.heading
    return first_heading


def chunk_markdown(note: Note, options: ChunkOptions) -> list[Chunk]:
    """Structure-aware chunks of about `size` words.

    Each chunk ends at the best boundary between `min_fill` x `size` and `size` words: a
    heading, else a paragraph or code block edge, else a sentence end, else exactly `size`
    words. Chunks stay close to `size` (uniform lengths keep BM25's length normalisation
    fair) while sections, paragraphs and code blocks stay whole where they fit. Neighbours
    share `overlap` words where a cut falls inside a paragraph.
    """
    lo = max(1, int(options.size * options.min_fill))
    if kernels.TEXT is not None:
        flat, trails = kernels.TEXT.markdown_chunks(
            note.text, note.body_start, _is_org(note), HEADING_SEP, options.size, options.overlap, lo
        )
        text = note.text
        return [
            Chunk(note.path, trails[trail], first, last, start, end, text[start:end])
            for start, end, first, last, trail in np.frombuffer(flat, np.int64).reshape(-1, 5).tolist()
        ]
    lines = _Lines(note.text)
    blocks = _blocks(note)
    block_ends = [b.end for b in blocks]
    return [
        _make(note, lines, HEADING_SEP.join(_trail_at(blocks, block_ends, start, end)), start, end)
        for start, end in _cuts_python(note, blocks, options.size, options.overlap, lo)
    ]


def _cuts_python(note: Note, blocks: list[_Block], size: int, overlap: int, lo: int) -> list[tuple[int, int]]:
    """The (start, end) character spans of chunk_markdown's chunks; `lo`: fewest words before a cut.
    _text.markdown_chunks (see kernels) is the compiled twin of this, _blocks, _trail_at and _Lines (tested equal)."""
    body = note.text[note.body_start :]
    if len(body.split()) <= size + size // 4:  # the common short note: one chunk, no cut to choose
        stripped = body.strip()
        if not stripped:
            return []
        start = note.body_start + len(body) - len(body.lstrip())
        return [(start, start + len(stripped))]
    cp = _body_code_points(note)
    starts, ends = _word_spans(cp, note.body_start)
    n = len(starts)
    breaks = _break_points(cp, note.body_start, starts, ends, blocks)
    cuts: list[tuple[int, int]] = []
    i = 0
    while i < n:
        if n - i <= size + size // 4:  # the rest fits (a little over beats a tiny last chunk)
            cut = n
        else:
            window = breaks[i + lo : i + size + 1]
            best = int(window.max())
            cut = i + lo + (len(window) - 1 - int(np.argmax(window[::-1] == best))) if best else i + size
        cuts.append((starts[i], ends[cut - 1]))
        if cut >= n:
            break
        i = cut if breaks[cut] >= _BREAK_BLOCK else max(cut - overlap, i + 1)  # overlap only mid-paragraph
    return cuts


CONTEXT_SEP = " \n"  # between the context's parts in the indexed text: a break no phrase crosses


def context_parts(title: str, heading: str) -> list[str]:
    """What `context` indexes with a chunk: the note's title, then its heading trail (no repeats)."""
    parts = [title] if title else []
    for h in heading.split(HEADING_SEP) if heading else []:
        if h.casefold() not in (p.casefold() for p in parts):
            parts.append(h)
    return parts


def context_text(title: str, heading: str) -> str:
    """The context as it is indexed: its parts joined by CONTEXT_SEP."""
    return CONTEXT_SEP.join(context_parts(title, heading))


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
