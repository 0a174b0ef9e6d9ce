"""Spotting instruction-like text inside notes (possible prompt injection).

Notes are data. A note that says "ignore previous instructions" is still quoted as an
excerpt, but the user is shown that it looks like an instruction aimed at the model.
Disguises are undone before matching: NFKC (fullwidth letters), invisible format characters
(a zero-width space inside a word) removed, look-alike Cyrillic and Greek letters folded to
Latin for the Latin-script patterns, and line breaks read as spaces (an instruction split over
two lines). Findings point into the original text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One instruction-like passage: why it was flagged and where it is."""

    reason: str
    text: str
    start: int
    end: int


_IGNORE = "override of earlier instructions"
_ROLE = "tries to assign the model a new role"
_SYSTEM = "mentions the system prompt"
_MARKER = "chat role marker"

# (pattern, reason); patterns are matched case-insensitively on the normalised text (see _view).
_PATTERNS: list[tuple[str, str]] = [
    # English
    (
        r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any)\b"
        r"[^.\n]{0,20}\b(instructions?|prompts?|rules|directions)\b",
        _IGNORE,
    ),
    (
        r"\b(ignore|disregard|forget)\s+(all\s+|everything\s+)?(of\s+)?(the|what(ever)?\s+(is|was|came))\s+"
        r"(above|before|previous(ly)?|earlier)\b",
        _IGNORE,
    ),
    (
        r"\bforget\s+(everything|all(\s+that)?|what)\s+(you\s+(were|have\s+been|'ve\s+been)\s+"
        r"(told|given|instructed)|(that\s+)?(was|has\s+been)\s+said)",
        _IGNORE,
    ),
    (r"\bnew\s+(instructions?|rules|system\s+prompt)\s*:", "announces new instructions"),
    (r"\byou are now\b|\bfrom now on,? you\b|\bact as (an? )?(unrestricted|jailbroken|different)\b", _ROLE),
    (r"\b(system|developer) (prompt|message|instructions?)\b", _SYSTEM),
    (r"\bdo not (tell|inform) the user\b", "asks to hide something from the user"),
    # Czech
    (
        r"\b(ignoruj|ignorujte|zapomeň|zapomeňte)\b[^.\n]{0,40}\b(předchozí|dřívější|všechny|výše uvedené)\b"
        r"[^.\n]{0,20}\b(instrukce|pokyny|příkazy)\b",
        _IGNORE,
    ),
    (r"\b(nyní|teď) jsi\b|\bod teď jsi\b", _ROLE),
    (r"\bsystémov(ý|ého|é) (prompt|pokyn)", _SYSTEM),
    # Ukrainian
    (
        r"(ігноруй|ігноруйте|забудь|забудьте)[^.\n]{0,40}(попередні|усі|всі|вищезазначені)[^.\n]{0,20}"
        r"(інструкції|вказівки|команди)",
        _IGNORE,
    ),
    (r"(тепер|відтепер) ти\b", _ROLE),
    (r"системн(ий|ого|і) (промпт|запит|інструкці)", _SYSTEM),
    # French
    (
        r"\b(ignore[sz]?|oublie[sz]?)\b[^.\n]{0,40}\b(instructions|consignes)\b[^.\n]{0,20}"
        r"\b(précédentes|antérieures|ci-dessus)\b",
        _IGNORE,
    ),
    (r"\b(tu es|vous êtes) (maintenant|désormais)\b", _ROLE),
    (r"\bprompt (du )?système\b|\bmessage système\b", _SYSTEM),
    # Italian
    (
        r"\b(ignora|ignorate|dimentica)\b[^.\n]{0,40}\b(istruzioni|indicazioni)\b[^.\n]{0,20}"
        r"\b(precedenti|sopra)\b",
        _IGNORE,
    ),
    (r"\b(ora|adesso) sei\b|\bda ora in poi sei\b", _ROLE),
    (r"\bprompt di sistema\b", _SYSTEM),
    # German
    (
        r"\b(ignoriere|ignorieren sie|vergiss)\b[^.\n]{0,40}\b(vorherigen|bisherigen|obigen|alle)\b[^.\n]{0,20}"
        r"\b(anweisungen|instruktionen|befehle)\b",
        _IGNORE,
    ),
    (r"\bdu bist (jetzt|nun|ab sofort)\b", _ROLE),
    (r"\bsystem-?prompt\b", _SYSTEM),
    # Chat-template and role markers
    (r"<\|(im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<</?SYS>>", _MARKER),
    (r"^\s*(system|assistant)\s*:", _MARKER),
    (r"^#{1,3}\s*(system|assistant|instruction)s?\s*:?\s*$", _MARKER),
]


def _across_lines(pattern: str) -> str:
    """A pattern that also matches when the passage is split over lines: spaces match any white space."""
    return pattern.replace(r"[^.\n]", r"[^.]").replace(" ", r"\s+")


# Line-anchored patterns (role markers) read line by line; the others match across line breaks.
_COMPILED = [
    (re.compile(p if p.startswith("^") else _across_lines(p), re.IGNORECASE | re.MULTILINE), reason)
    for p, reason in _PATTERNS
]

# Cyrillic and Greek letters that look like Latin ones, from Unicode's confusables list; folded
# only for matching, in a copy of the text (one character for one, so positions stay).
_LOOKALIKES = "аеорсухіјѕԁһԛԝνοαιρτκӏɡոАЕОРСУХІЈЅНКМТВΑΒΕΗΙΚΜΝΟΡΤΧΥΖ"
_LATIN = "aeopcyxijsdhqwvoaiptklgnAEOPCYXIJSHKMTBABEHIKMNOPTXYZ"
_CONFUSABLES = str.maketrans(_LOOKALIKES, _LATIN)
_FORMAT_CHARS = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")


def _view(text: str) -> tuple[str, list[int] | None]:
    """The text as the patterns read it: NFKC (fullwidth letters), invisible format characters
    removed; with a map from each of its characters back to the original (None: one for one)."""
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _FORMAT_CHARS.search(text)):
        return text, None
    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cf":  # zero-width spaces and joiners, soft hyphens, bidi marks
            continue
        norm = unicodedata.normalize("NFKC", ch) if not ch.isascii() else ch
        chars += norm
        where += [i] * len(norm)
    return "".join(chars), where + [len(text)]


def detect_injection(text: str) -> list[Finding]:
    """Instruction-like passages in `text`, in order of appearance (overlaps merged by first reason)."""
    found: list[Finding] = []
    view, where = _view(text)
    views = [view] if view.isascii() else [view, view.translate(_CONFUSABLES)]
    for pattern, reason in _COMPILED:
        for candidate in views:
            for m in pattern.finditer(candidate):
                start, end = m.span()
                if where is not None:
                    start, end = where[start], (where[end - 1] + 1 if end > start else where[start])
                found.append(Finding(reason, text[start:end].strip(), start, end))
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            continue
        merged.append(f)
    return merged


def describe(findings: list[Finding]) -> str:
    """A one-line summary for a flag tooltip or the prompt pane."""
    if not findings:
        return ""
    reasons = sorted({f.reason for f in findings})
    quoted = "; ".join(f"“{f.text[:40]}”" for f in findings[:2])
    return f"looks like instructions to the model ({', '.join(reasons)}): {quoted}"
