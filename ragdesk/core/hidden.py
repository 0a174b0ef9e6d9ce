"""Characters that hide text from a person but not from a model, in one table, and what keeps them:
what a prompt, an excerpt and an assistant's answer hold is what a person can see.

Each class is removed wherever it stands, except where a script or an emoji needs it: a zero-width
joiner or non-joiner between letters of a script that joins (Arabic, Persian, the Indic scripts …)
or inside an emoji sequence, a variation selector after an emoji or a CJK ideograph, tag characters
inside an emoji tag sequence (the flags of England, Scotland, Wales). Hangul fillers become spaces.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# class -> the characters (a regular expression's character class), as a person would name them
HIDDEN: dict[str, str] = {
    "bidi controls": "\u202a-\u202e\u2066-\u2069",  # embeddings, overrides and isolates: text shown reversed
    "interlinear annotations": "\ufff9-\ufffb",
    "soft hyphens": "\u00ad",
    "tag characters": "\U000e0000-\U000e007f",
    "zero-width characters": "\u200b-\u200d\u2060-\u2064\ufeff\u180e\u034f",  # and the grapheme joiner
    "variation selectors": "\ufe00-\ufe0f\U000e0100-\U000e01ef",
}
AS_SPACE = "\u3164\u115f\u1160\uffa0"  # Hangul fillers: blank, but letters to a regular expression

_ANY = re.compile("[" + "".join(HIDDEN.values()) + "]")
# Scripts whose letters join or take a zero-width (non-)joiner: Arabic, Syriac, Thaana, NKo, the Indic
# scripts, Sinhala, Myanmar, Khmer, Mongolian, Arabic presentation forms.
_JOINING = ((0x0600, 0x08FF), (0x0900, 0x0DFF), (0x1000, 0x109F), (0x1780, 0x18AF), (0xA8E0, 0xA8FF),
            (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))  # fmt: skip
_EMOJI = ((0x2190, 0x21FF), (0x2300, 0x23FF), (0x2460, 0x27BF), (0x2900, 0x297F), (0x2B00, 0x2BFF),
          (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3299), (0x1F000, 0x1FAFF), (0x00A9, 0x00A9),
          (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122), (0x2139, 0x2139))  # fmt: skip
_CJK = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_KEYCAP = "0123456789#*"
# The flags spelled in tag characters (Unicode's recommended set: England, Scotland, Wales); any other
# run of tags is hidden text, whatever it follows.
_FLAGS = tuple(
    "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f" for code in ("gbeng", "gbsct", "gbwls")
)


def _within(ch: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    c = ord(ch)
    return any(lo <= c <= hi for lo, hi in ranges)


def _emoji(ch: str) -> bool:
    return _within(ch, _EMOJI) or ch in _KEYCAP


def _kept(text: str, i: int) -> bool:
    """Whether the hidden character at `i` is part of what a script or an emoji needs."""
    ch = text[i]
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch in "\u200c\u200d":  # (non-)joiner: between letters of a joining script, or emoji + ZWJ + emoji
        if before and after and _within(before, _JOINING) and _within(after, _JOINING):
            return True
        return ch == "\u200d" and bool(before) and bool(after) and _emoji_end(text, i) and _emoji(after)
    if "\ufe00" <= ch <= "\ufe0f":  # emoji or text presentation after an emoji; standardized CJK variants
        if not before:
            return False
        return _within(before, _CJK) or (ch in "\ufe0e\ufe0f" and _emoji(before))
    if "\U000e0100" <= ch <= "\U000e01ef":  # ideographic variation sequences
        return bool(before) and _within(before, _CJK)
    if "\U000e0020" <= ch <= "\U000e007f":  # a subdivision's flag: black flag, its tag letters, cancel tag
        return any(text[j : j + len(flag)] == flag for flag in _FLAGS for j in range(max(0, i - 6), i + 1))
    return False


def _emoji_end(text: str, i: int) -> bool:
    """The character before `i` ends an emoji (itself, or a presentation selector or skin tone after one)."""
    j = i - 1
    while j > 0 and (text[j] == "\ufe0f" or "\U0001f3fb" <= text[j] <= "\U0001f3ff"):
        j -= 1
    return _emoji(text[j])


def hidden_class(ch: str) -> str | None:
    """The class of a hidden character (HIDDEN's key), or None."""
    return next((name for name, chars in HIDDEN.items() if re.fullmatch(f"[{chars}]", ch)), None)


def _replace_hidden(text: str, by: Callable[[str], str]) -> str:
    """`text` with each hidden character (but those a script or an emoji needs) replaced by `by(ch)`."""
    if text.isascii() or not _ANY.search(text):
        return text
    return "".join(by(ch) if _ANY.match(ch) and not _kept(text, i) else ch for i, ch in enumerate(text))


def escape_hidden(text: str) -> str:
    """`text` with its hidden characters (but those a script or an emoji needs) written as `\\xNNNN`:
    for a file name or a heading trail, where a person should see that something was hidden there."""
    return _replace_hidden(text, lambda ch: f"\\x{ord(ch):02x}")


def strip_hidden(text: str) -> str:
    """`text` without its hidden characters (but those a script or an emoji needs), Hangul fillers
    as spaces. ASCII text is returned as it is at once."""
    if text.isascii():
        return text
    return _replace_hidden(text, lambda ch: "").translate({ord(c): " " for c in AS_SPACE})
