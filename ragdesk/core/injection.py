"""Spotting instruction-like text inside notes (possible prompt injection).

Notes are data. A note that says "ignore previous instructions" is still quoted as an
excerpt, but the user is shown that it looks like an instruction aimed at the model.
"""

from __future__ import annotations

import re
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

# (pattern, reason); patterns are matched case-insensitively on the raw text.
_PATTERNS: list[tuple[str, str]] = [
    # English
    (
        r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any)\b"
        r"[^.\n]{0,20}\b(instructions?|prompts?|rules|directions)\b",
        _IGNORE,
    ),
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
_COMPILED = [(re.compile(p, re.IGNORECASE | re.MULTILINE), reason) for p, reason in _PATTERNS]


def detect_injection(text: str) -> list[Finding]:
    """Instruction-like passages in `text`, in order of appearance (overlaps merged by first reason)."""
    found: list[Finding] = []
    for pattern, reason in _COMPILED:
        for m in pattern.finditer(text):
            found.append(Finding(reason, m.group(0).strip(), m.start(), m.end()))
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
