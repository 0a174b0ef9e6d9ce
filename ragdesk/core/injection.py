"""Spotting instruction-like text inside notes (possible prompt injection).

Notes are data. A note that says "ignore previous instructions" is still quoted as an
excerpt, but the user is shown that it looks like an instruction aimed at the model.
Disguises are undone before matching, each reading of the text a "view" the patterns try:
NFKC (fullwidth letters); format characters, the grapheme joiner and zero-width spaces removed
and Hangul fillers read as spaces; text spelled in invisible tag characters decoded; look-alike
letters (Unicode's confusables list) folded to Latin; words split by hyphens or spaced out
letter by letter joined; line breaks read as spaces. Findings point into the original text.
Measured on tests/data/injections/positives.txt and ../shared/data (tests/benchmarks/flag_rates.py).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from .hidden import AS_SPACE
from .injection_rules import PATTERNS
from .injection_views import View, cipher_views, decoded_views, replace_matches


@dataclass(frozen=True)
class Finding:
    """One instruction-like passage: why it was flagged and where it is."""

    reason: str
    text: str
    start: int
    end: int


def _across_lines(pattern: str) -> str:
    """A pattern that also matches when the passage is split over lines: spaces match any white space."""
    return pattern.replace(r"[^.\n]", r"[^.]").replace(" ?", r"\s*").replace(" ", r"\s+")


# Line-anchored patterns (role markers) read line by line; the others match across line breaks.
_COMPILED = [
    (
        re.compile(p if p.startswith("^") else _across_lines(p), re.IGNORECASE | re.MULTILINE),
        reason,
        tuple(frozenset(n.split("&")) for n in needles),
    )
    for p, reason, needles in PATTERNS
]
_NEEDLES = sorted({part for _, _, needles in _COMPILED for n in needles for part in n})
_BY_NEEDLE: dict[str, list[int]] = {}  # needle -> the patterns (by index) that name it
for _i, (_, _, _needles) in enumerate(_COMPILED):
    for _part in {part for n in _needles for part in n}:
        _BY_NEEDLE.setdefault(_part, []).append(_i)

_TAGS = range(0xE0000, 0xE0080)  # Unicode tag characters: invisible; E0020-E007E spell ASCII ("smuggling")
_DROPPED = "\u034f"  # combining grapheme joiner: invisible, not a format character
# A word split to hide it: "ig-nore" (a hyphen between letters), "i g n o r e" (letters spaced out).
_SPLIT = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])|(?:(?<!\S)[^\W\d_] )+[^\W\d_](?!\S)")


@lru_cache(maxsize=1)
def _confusables() -> dict[int, str]:
    """Non-ASCII letters that look like an ASCII letter (dotless ı, Cyrillic а, Armenian օ, Greek ο …),
    from Unicode's confusables list as the confusable_homoglyphs package ships it; one character for
    one, so positions stay. Without the package, the Cyrillic and Greek look-alikes it would give."""
    table: dict[int, str] = {}
    try:
        data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8"))
    except (ModuleNotFoundError, FileNotFoundError, ValueError):  # pragma: no cover - the package is a dependency
        return str.maketrans(_LOOKALIKES, _LATIN)
    for ch, entries in data.items():
        if len(ch) != 1 or ch.isascii():
            continue
        latin = [e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii() and e["c"].isalpha()]
        if latin:
            table[ord(ch)] = min(latin, key=lambda c: (not c.islower(), c))
    table.update(_AS_L)
    return table


# The vertical strokes that the list's data folds to "i" stand for "l" as often ("tеӏӏ"): read as "l".
_AS_L = {ord("ӏ"): "l", ord("Ӏ"): "l", ord("ǀ"): "l", ord("ⅼ"): "l"}
def look_alike_count() -> int:
    """How many letters are folded to Latin (thousands with Unicode's list; 53 without it)."""
    return len(_confusables())


_LOOKALIKES = "аеорсухіјѕԁһԛԝνοαιρτκӏɡոАЕОРСУХІЈЅНКМТВΑΒΕΗΙΚΜΝΟΡΤΧΥΖ"
_LATIN = "aeopcyxijsdhqwvoaiptklgnAEOPCYXIJSHKMTBABEHIKMNOPTXYZ"

@lru_cache(maxsize=1)
def _hidden_chars() -> re.Pattern[str]:
    """Every character a view drops or changes: format characters (category Cf: zero-width spaces,
    bidi marks, tag characters), the grapheme joiner, Hangul fillers."""
    cf = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) == "Cf"]
    extra = _DROPPED + AS_SPACE + "".join(map(chr, range(0xE0000, 0xE0080))) + "\U000110bd\U000110cd"
    return re.compile("[" + re.escape("".join(cf) + extra) + "]")


def _base_views(text: str) -> list[View]:
    """The visible text (NFKC: fullwidth letters; format characters and the grapheme joiner removed,
    Hangul fillers as spaces) and, when there are any, the invisible text spelled in tag characters."""
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _hidden_chars().search(text)):
        return [(text, None)]
    chars: list[str] = []
    where: list[int] = []
    hidden: list[str] = []
    hidden_where: list[int] = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp in _TAGS:
            if 0xE0020 <= cp <= 0xE007E:
                hidden.append(chr(cp - 0xE0000))
                hidden_where.append(i)
            continue
        if ch in AS_SPACE:
            norm = " "
        elif ch in _DROPPED or unicodedata.category(ch) == "Cf":
            continue
        else:
            norm = unicodedata.normalize("NFKC", ch) if not ch.isascii() else ch
        chars += norm
        where += [i] * len(norm)
    views = [("".join(chars), where + [len(text)])]
    if len(hidden) >= 8:
        views.append(("".join(hidden), hidden_where + [len(text)]))
    return views


def _joined(view: View) -> View | None:
    """The view with hidden word splits undone ("ig-nore", "i g n o r e"), or None when it has none."""
    return replace_matches(view, _SPLIT, lambda m: m.group(0).replace(" ", "").replace("-", ""))


def _views(text: str) -> list[View]:
    """Every reading of `text` the patterns try: visible and smuggled text, each also with look-alike
    letters folded to Latin, with spelling disguises and encodings undone (injection_views), and with
    split words joined."""
    views = _base_views(text)
    for text_view, where in list(views):
        if not text_view.isascii():
            views.append((text_view.translate(_confusables()), where))
    for view in list(views):
        views += decoded_views(view)
    for view in list(views):
        joined = _joined(view)
        if joined is not None:
            views.append(joined)
    visible, where = views[0]
    if where is not None:  # the ciphers' places are the visible view's: map them on to the original's
        return views + [(t, where if w is None else [where[i] for i in w]) for t, w in cipher_views(visible)]
    return views + cipher_views(visible)


def readings(text: str) -> list[View]:
    """Every reading of `text` the patterns try (see _views), for the probe's sentences."""
    return _views(text)


def detect_injection(text: str) -> list[Finding]:
    """Instruction-like passages in `text`, in order of appearance (overlaps merged by first reason)."""
    found: list[Finding] = []
    for candidate, where in _views(text):
        low = candidate.lower()
        present = {n for n in _NEEDLES if n in low}
        tried = sorted({i for n in present for i in _BY_NEEDLE[n]})
        for pattern, reason, needles in (_COMPILED[i] for i in tried):
            if not any(n <= present for n in needles):
                continue
            for m in pattern.finditer(candidate):
                start, end = m.span()
                if where is not None:  # a backwards view maps backwards: the span is its extent
                    first, last = where[start], where[max(end - 1, start)]
                    start, end = min(first, last), max(first, last) + 1
                end = _under_heading(text, start, end)
                found.append(Finding(reason, text[start:end].strip(), start, end))
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            continue
        merged.append(f)
    return merged


_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]")  # a Markdown heading ("#tag" is a tag)
_NEXT_PARAGRAPH = re.compile(r"\n[ \t]*\n*[\s\S]*?(?=\n[ \t]*\n|\n#|\Z)")


def _under_heading(text: str, start: int, end: int) -> int:
    """Where a finding ends: a heading that speaks to the model ("## Instructions for the AI") flags
    the paragraph under it too, which is what it introduces."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end < 0 or not _HEADING.match(text, line_start, start + 1):
        return end
    m = _NEXT_PARAGRAPH.match(text, line_end)
    return m.end() if m else end


def describe(findings: list[Finding]) -> str:
    """A one-line summary for a flag tooltip or the prompt pane."""
    if not findings:
        return ""
    reasons = sorted({f.reason for f in findings})
    quoted = "; ".join(f"“{f.text[:40]}”" for f in findings[:2])
    return f"looks like instructions to the model ({', '.join(reasons)}): {quoted}"
