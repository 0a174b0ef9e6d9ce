"""Readings of a text that undo spelling disguises, for the injection patterns and the probe (issue 59):
leetspeak, small capitals, letters split by dots or underscores, CamelCase run together, base64 and
ROT13 encodings, text written backwards. Each view is the text as read plus, for each of its
characters, the place in the original it came from, so a finding points at what the person sees."""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from functools import lru_cache

# A text as the patterns read it, and each character's place in the original (None: the same place; one
# more entry than characters, for the end); monotonic, or (a backwards view) decreasing.
View = tuple[str, "list[int] | range | None"]

# Digits and marks read as letters inside a word that has letters ("1gn0r3", "pr3v10u5", "@ll").
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
_LEET_WORD = re.compile(r"(?=[\w@$!]*[^\W\d_])(?=[\w@$!]*[0134578@$])[\w@$!]{3,}")
_LEET_HINT = re.compile(r"[^\W\d_][0134578@$]|[0134578@$][^\W\d_]")  # a letter beside a digit or mark
# Letters split by one dot or underscore each, three or more ("a.l.l", "d_i_s_r_e_g_a_r_d").
_SPLIT_BY_MARKS = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][._]){2,}[^\W\d_](?![^\W\d_])")
# Three or more capitalised words run together ("IgnoreAllPreviousInstructions").
_CAMEL = re.compile(r"(?<![A-Za-z0-9+/])(?:[A-Z][a-z]+){3,}(?![A-Za-z0-9+/])")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{20,}={0,2}(?![A-Za-z0-9+/=])")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm"
)


@lru_cache(maxsize=1)
def _small_capitals() -> dict[int, str]:
    """Letters Unicode names as small capitals (ᴀ ʙ ᴄ …) or as modifier letters, read as the Latin letter."""
    table: dict[int, str] = {}
    for cp in [*range(0x0250, 0x2C80), *range(0xA700, 0xA800)]:  # IPA, phonetic, Latin Extended-D
        name = unicodedata.name(chr(cp), "")
        m = re.fullmatch(r"LATIN (?:LETTER SMALL CAPITAL|SMALL LETTER|MODIFIER LETTER SMALL) ([A-Z])", name)
        if m:
            table[cp] = m.group(1).lower()
    return table


@lru_cache(maxsize=1)
def _small_capital_chars() -> re.Pattern[str]:
    return re.compile("[" + "".join(map(chr, _small_capitals())) + "]")


def _positions(view: View) -> list[int] | range:
    text, where = view
    return where if where is not None else list(range(len(text) + 1))


def replace_matches(view: View, pattern: re.Pattern[str], change) -> View | None:  # type: ignore[no-untyped-def]
    """The view with each match of `pattern` replaced by change(match) (its characters mapped to the
    match's span), or None when nothing matched."""
    text, _ = view
    idx = _positions(view)
    out: list[str] = []
    where: list[int] = []
    at = 0
    for m in pattern.finditer(text):
        new = change(m)
        if new is None:
            continue
        out.append(text[at : m.start()])
        where += idx[at : m.start()]
        out.append(new)
        span = max(m.end() - m.start(), 1)
        where += [idx[m.start() + min(i * span // max(len(new), 1), span - 1)] for i in range(len(new))]
        at = m.end()
    if not out:
        return None
    out.append(text[at:])
    where += idx[at:]
    return "".join(out), where


def _base64_text(m: re.Match[str]) -> str | None:
    """A base64 run decoded, when it decodes to readable text of several words."""
    blob = m.group(0)
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
    if len(decoded.split()) < 3 or printable < 0.95 * len(decoded):
        return None
    return decoded


def decoded_views(view: View) -> list[View]:
    """The readings of `view` with each disguise undone that it holds: leetspeak (three words or more)
    and small capitals read as letters, split letters and CamelCase as words, base64 runs decoded."""
    text, where = view
    out: list[View] = []
    if _small_capital_chars().search(text):
        out.append((text.translate(_small_capitals()), where))
    leet = len(_LEET_HINT.findall(text, 0, 4000)) >= 3
    for pattern, change in (
        (_LEET_WORD if leet else None, lambda m: m.group(0).translate(_LEET)),
        (_SPLIT_BY_MARKS, lambda m: m.group(0).replace(".", "").replace("_", "")),
        (_CAMEL, lambda m: re.sub(r"(?<=[a-z])(?=[A-Z])", " ", m.group(0))),
        (_BASE64, _base64_text),
    ):
        changed = replace_matches(view, pattern, change) if pattern is not None else None
        if changed is not None:
            out.append(changed)
    return out


def cipher_views(text: str) -> list[View]:
    """`text` in ROT13 or written backwards, when it holds the common short words so written ("gur",
    "naq", "lbh"; "eht", "dna", "uoy": the, and, you), as such text does."""
    low = text.lower()
    out: list[View] = []
    if sum(w in low for w in _ROT13_HINTS) >= 2:
        out.append((text.translate(_ROT13), None))
    if sum(w in low for w in _BACKWARDS_HINTS) >= 2:
        n = len(text)
        out.append((text[::-1], range(n - 1, -2, -1)))
    return out


_COMMON = ("the", "and", "you", "your", "all", "to", "of", "this", "with")
_ROT13_HINTS = [f" {w.translate(_ROT13)} " for w in _COMMON]
_BACKWARDS_HINTS = [f" {w[::-1]} " for w in _COMMON]
