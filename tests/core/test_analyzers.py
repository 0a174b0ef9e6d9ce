"""Analyzers: the exact terms and offsets each one produces."""

from __future__ import annotations

import pytest

from ragdesk.core.analyzers import Analyzer, AnalyzerConfig


def test_words_casefold_and_nfc() -> None:
    a = Analyzer(AnalyzerConfig("words"))
    decomposed = "Indukce\u0301"  # e + combining acute
    assert a.terms(f"Straße {decomposed} v") == ["strasse", "indukcé", "v"]


def test_stems_first_five_letters_merge_inflections() -> None:
    a = Analyzer(AnalyzerConfig("stems"))
    assert a.terms("indukci indukce indukcí") == ["induk", "induk", "induk"]
    assert Analyzer(AnalyzerConfig("stems", stem_length=3)).terms("python") == ["pyt"]


def test_trigrams_as_in_the_issue() -> None:
    a = Analyzer(AnalyzerConfig("trigrams"))
    assert a.terms("indukcí") == ["_in", "ind", "ndu", "duk", "ukc", "kcí", "cí_"]
    shared = set(a.terms("indukcí")) & set(a.terms("indukce"))
    assert len(shared) == 5
    assert a.terms("v") == ["_v_"]


def test_token_offsets_point_into_the_original_text() -> None:
    text = "Hello, Wörld! hello"
    toks = Analyzer(AnalyzerConfig("words")).tokens(text)
    assert [(t.term, text[t.start : t.end]) for t in toks] == [
        ("hello", "Hello"),
        ("wörld", "Wörld"),
        ("hello", "hello"),
    ]


def test_query_terms_distinct_with_source_words() -> None:
    a = Analyzer(AnalyzerConfig("stems"))
    assert a.query_terms("indukce indukci Python python!") == [("induk", ["indukce", "indukci"]), ("pytho", ["python"])]
    assert a.query_terms("?!... ---") == []


def test_options_off_by_default_and_available() -> None:
    assert Analyzer(AnalyzerConfig("words")).terms("a v the") == ["a", "v", "the"]
    folded = Analyzer(AnalyzerConfig("words", fold_accents=True, stop_words=("en",)))
    assert folded.terms("The café IS open") == ["cafe", "open"]
    assert AnalyzerConfig("stems", 4, True, ("cs",)).key == "stems_4_fold_stop-cs"


def test_bad_config_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown analyzer"):
        AnalyzerConfig("snowball")
    with pytest.raises(ValueError, match="stop-word"):
        AnalyzerConfig("words", stop_words=("xx",))
