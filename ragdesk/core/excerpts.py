"""Excerpts: passages offered to a prompt, what they cost in tokens, and how one is quoted.

Quoted line by line ("> ") or as an XML element, so nothing inside a note can pass for a new section
of the prompt; two overlapping chunks of a note become one excerpt, so no words are pasted twice.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from .chunking import HEADING_SEP
from .hidden import escape_hidden, strip_hidden
from .injection import Finding, detect_injection
from .paths import shown

TOKEN_ESTIMATOR = "estimate: ~4 characters per token for English, fewer for accented, Cyrillic and CJK text"
_PIECE = re.compile(r"\w+|[^\w\s]+")


def estimate_tokens(text: str) -> int:
    """Rough LLM token count: words by length and script, punctuation runs by length."""
    total = 0
    for m in _PIECE.finditer(text):
        piece = m.group(0)
        n = len(piece)
        if not piece[0].isalnum() and piece[0] != "_":
            total += math.ceil(n / 2)
        elif piece.isascii():
            total += 1 if n <= 6 else math.ceil(n / 4)  # common English words are one token
        else:
            ch = piece[0]
            name = unicodedata.name(ch, "")
            if name.startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL")):
                total += n
            elif name.startswith("CYRILLIC") or name.startswith(("GREEK", "ARABIC", "HEBREW")):
                total += max(1, math.ceil(n / 2.5))
            else:
                total += max(1, math.ceil(n / 3))
    return total


@dataclass(frozen=True)
class Excerpt:
    """A passage offered to the prompt: where it came from and its text."""

    path: str
    heading: str
    start_line: int
    end_line: int
    text: str
    rank: int = 0
    page: int | None = None  # a PDF's page: cited instead of lines
    known_findings: list[Finding] | None = field(default=None, repr=False, compare=False)  # found earlier
    span: tuple[int, int] | None = None  # the text's characters in its note (a hit's): see joined
    ranks: tuple[int, ...] = ()  # the results it holds (a joined excerpt holds several)
    ticked: bool = False  # the person asked for it beyond the top k: always taken, not counted in k
    whole_tokens: int | None = None  # cut to its best words to fit the budget: what all of it costs
    context: str = field(default="", repr=False)  # what of its note before it decides its secrets

    @classmethod
    def of(cls, hit: Any, findings: list[Finding] | None = None) -> Excerpt:
        """A search hit as an excerpt, its source as a person reads it (see paths.shown); `findings`:
        what detect_injection found in it already (the window's search worker looks once)."""
        return cls(
            shown(hit.path),
            shown(hit.heading),
            hit.start_line,
            hit.end_line,
            hit.text,
            hit.rank,
            hit.page,
            findings,
            tuple(hit.span),
            (hit.rank,),
            context=getattr(hit, "context", ""),
        )

    def joined(self, other: Excerpt) -> Excerpt | None:
        """One excerpt for two of the same note whose texts overlap or meet (neighbouring chunks share
        ~20 words): the note's text from the first one's start to the later end, cited from the first
        line to the last, at the better rank; None when they are apart."""
        if self.path != other.path or self.span is None or other.span is None:  # a cut one has no span
            return None
        first, second = sorted((self, other), key=lambda e: e.span or (0, 0))
        assert first.span is not None and second.span is not None
        if second.span[0] > first.span[1]:
            return None
        tail = second.text[first.span[1] - second.span[0] :] if second.span[1] > first.span[1] else ""
        return replace(
            first,
            text=first.text + tail,
            span=(first.span[0], max(first.span[1], second.span[1])),
            end_line=max(first.end_line, second.end_line),
            rank=min(first.rank, second.rank),
            ranks=tuple(sorted({*first.ranks, *second.ranks})),
            ticked=first.ticked or second.ticked,
            known_findings=None,  # looked for again in the joined text
        )

    @property
    def source(self) -> str:
        """Path and heading trail on one line: a line break or control character in a file name
        cannot start a line of the prompt outside the quoted excerpt."""
        kept = "\u200c\u200d"  # joiners a script or an emoji needs (escape_hidden shows the others)
        source = escape_hidden(self._raw_source)
        return "".join(ch if ch.isprintable() or ch in kept else f"\\x{ord(ch):02x}" for ch in source)

    @property
    def _raw_source(self) -> str:
        """path › heading, or for a PDF path › p. N › heading."""
        page = f"{HEADING_SEP}p. {self.page}" if self.page is not None else ""
        return self.path + page + (HEADING_SEP + self.heading if self.heading else "")

    @property
    def findings(self) -> list[Finding]:
        """Instruction-like text in the excerpt or in its source (a file or heading named
        "Ignore all previous instructions" goes into the prompt too)."""
        if self.known_findings is not None:
            return self.known_findings
        in_source = [replace(f, reason=f"in its source: {f.reason}") for f in detect_injection(self._raw_source)]
        return in_source + detect_injection(self.text)


def format_excerpt(
    number: int, excerpt: Excerpt, fmt: str = "markdown", text: str | None = None, source: str | None = None
) -> str:
    """One excerpt: Markdown (a numbered header, every line quoted with "> ") or XML (an <excerpt>
    element, text escaped). `text` and `source` replace the excerpt's own (a redacted copy)."""
    body = strip_hidden(excerpt.text if text is None else text).strip("\n")
    source = excerpt.source if source is None else source
    if fmt == "xml":
        where = (
            f'page="{excerpt.page}"' if excerpt.page is not None else f'lines="{excerpt.start_line}-{excerpt.end_line}"'
        )
        source = xml_escape(source, {'"': "&quot;"})
        cut = ' cut="to fit the budget"' if excerpt.whole_tokens is not None else ""
        return f'<excerpt n="{number}" source="{source}" {where}{cut}>\n{xml_escape(body)}\n</excerpt>'
    lines = body.split("\n")
    where = "" if excerpt.page is not None else f", lines {excerpt.start_line}–{excerpt.end_line}"  # a PDF: its page
    cut = ", cut to fit the budget" if excerpt.whole_tokens is not None else ""
    header = f"[{number}] ({source}{where}{cut})"
    return header + "\n" + "\n".join(("> " + line).rstrip() for line in lines)


def absorbed(chosen: list[Excerpt], ex: Excerpt) -> list[Excerpt] | None:
    """`chosen` with `ex` joined to the excerpt of its note it overlaps, and then any other that the
    joined one overlaps (chunks 1 and 3 taken, then 2); None when `ex` overlaps none."""
    found = next(((i, j) for i, c in enumerate(chosen) if (j := c.joined(ex)) is not None), None)
    if found is None:
        return None
    at, grown = found
    out = list(chosen)
    while True:
        out[at] = grown
        found = next(((i, j) for i, c in enumerate(out) if i != at and (j := grown.joined(c)) is not None), None)
        if found is None:
            return out
        other, grown = found
        del out[other]
        at -= other < at
