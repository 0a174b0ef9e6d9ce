"""The instruction flag judged like a classifier: how many disguised instructions of the labelled
corpus (tests/data/injections/positives.txt) it flags, and how many ordinary chunks of ../shared/data
(tests/benchmarks/flag_rates.py prints both, per disguise and per corpus)."""

from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

from ragdesk.core.excerpts import Excerpt
from ragdesk.core.injection import detect_injection
from ragdesk.core.prompt import build_prompt

from ..data.labelled import INJECTIONS, load, regenerated

RECORDS = load(INJECTIONS)
FLAGGED = 0.90  # issue #36: >= 90% of the disguised instructions flagged
FLAG_RATE = 0.001  # ... with at most 0.1% of ../shared/data's chunks flagged


def test_the_corpus_is_what_its_generator_writes(tmp_path: Path) -> None:
    assert regenerated(INJECTIONS, tmp_path / "positives.txt") == INJECTIONS.read_text(encoding="utf-8")


def test_the_corpus_covers_every_disguise_and_language() -> None:
    assert len(RECORDS) >= 100
    classes = Counter(r.cls for r in RECORDS)
    assert all(n >= 6 for n in classes.values()) and len(classes) == 14
    assert {"en", "fr", "cs", "de", "it", "uk"} <= {r.lang for r in RECORDS}


def test_share_of_disguised_instructions_flagged() -> None:
    missed = [r for r in RECORDS if not r.hit_by([(f.start, f.end) for f in detect_injection(r.text)])]
    assert 1 - len(missed) / len(RECORDS) >= FLAGGED, "\n".join(f"[{r.cls}] {r.text[:100]!r}" for r in missed)


def test_flag_rate_on_every_chunk_of_the_shared_corpora(shared_chunks: list[tuple[str, str, str]]) -> None:
    flagged = [p for p, heading, text in shared_chunks if Excerpt(p, heading, 1, 1, text).findings]
    assert len(flagged) / len(shared_chunks) <= FLAG_RATE, flagged[:50]


def test_invisible_characters_never_reach_the_prompt() -> None:
    """Tag characters (and zero-width spaces, word joiners, the grapheme joiner) hide text from the
    person but not from the model: the prompt drops them; Hangul fillers become spaces."""
    hidden = [r for r in RECORDS if r.cls in ("tag characters", "invisible tag characters", "zero-width characters",
                                              "combining grapheme joiner", "Hangul fillers")]  # fmt: skip
    excerpts = [Excerpt(f"n{i}.md", "", 1, 1, r.text, rank=i + 1) for i, r in enumerate(hidden)]
    prompt = build_prompt("what\u200b is\U000e0041 this?", excerpts)
    for text in (prompt.text, prompt.for_copy()):
        assert not [c for c in text if unicodedata.category(c) == "Cf" or c in "\u034f\u3164\u115f\u1160\uffa0"]
    assert "Question: what is this?" in prompt.text
    assert len(prompt.flagged) == len(hidden)  # flagged all the same
