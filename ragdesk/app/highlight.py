"""Matched terms in colour: one colour per query term (in query order), and a chunk's best passage
with its matches highlighted, as the results list, the explanation and the compare table show them."""

from __future__ import annotations

import html
import zlib

from PySide6.QtGui import QColor

SNIPPET_CHARS = 260  # about three lines of the snippet column at the default window size

# A light qualitative palette: neighbours differ clearly, text stays readable on top.
PALETTE = (
    "#8ecae6",
    "#ffb703",
    "#95d5b2",
    "#f4978e",
    "#cdb4db",
    "#ffd6a5",
    "#a0c4ff",
    "#caffbf",
    "#f9c74f",
    "#bdb2ff",
    "#ffadad",
    "#90dbf4",
)


_query_colors: dict[str, QColor] = {}


def set_query_terms(terms: list[str]) -> None:
    """Give the current query's terms distinct colours in query order (hashing gave "undo", "git" and
    "commit" the same blue); the rows of a combined analyzer's trigrams follow their own order."""
    _query_colors.clear()
    for i, term in enumerate(dict.fromkeys(terms)):
        _query_colors[term] = QColor(PALETTE[i % len(PALETTE)])


def term_color(term: str) -> QColor:
    """The term's colour: its place in the current query, else a stable hash (the same in every view)."""
    color = _query_colors.get(term)
    return color if color is not None else QColor(PALETTE[zlib.crc32(term.encode("utf-8")) % len(PALETTE)])


def best_passage(text: str, spans: list[tuple[int, int, str]], width: int = SNIPPET_CHARS) -> tuple[int, int]:
    """The `width` characters of `text` holding the most distinct matched terms (then the most matches),
    widened to word boundaries: what a result shows of its chunk."""
    if len(text) <= width:
        return 0, len(text)
    best, best_key = 0, (-1, -1)
    for start, _, _ in spans:
        lo = max(0, min(start - width // 4, len(text) - width))
        inside = [t for s, e, t in spans if s >= lo and e <= lo + width]
        key = (len(set(inside)), len(inside))
        if key > best_key:
            best, best_key = lo, key
    lo, hi = best, min(len(text), best + width)
    while lo > 0 and not text[lo - 1].isspace() and best - lo < 20:
        lo -= 1
    while hi < len(text) and not text[hi].isspace() and hi - best - width < 20:
        hi += 1
    return lo, hi


def highlighted_html(text: str, spans: list[tuple[int, int, str]], limit: int | None = None) -> str:
    """Escape `text` and wrap matched spans in their term colour. With `limit`: only the best passage
    of about that many characters (see best_passage), white space folded, "…" where it was cut."""
    lo, hi = best_passage(text, spans, limit) if limit is not None else (0, len(text))
    out: list[str] = ["… " if lo > 0 else ""]
    pos = lo
    for start, end, term in sorted(spans):
        if start < pos or end > hi:
            continue
        out.append(html.escape(text[pos:start]))
        out.append(f'<span style="background-color:{term_color(term).name()}">{html.escape(text[start:end])}</span>')
        pos = end
    out.append(html.escape(text[pos:hi]))
    out.append(" …" if hi < len(text) else "")
    body = "".join(out)
    if limit is not None:
        body = " ".join(body.split())
    return body
