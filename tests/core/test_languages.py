"""A query's elided articles and stop words are left out of BM25, said so, and "off" keeps every word."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core.analyzers import Analyzer, AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.languages import (
    QUERY_LANGUAGES,
    STOP_WORDS,
    QueryFilter,
    detect_language,
    dropped_text,
    query_filter,
)
from ragdesk.core.params import SearchParams
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes

FRENCH = "Comment retrouver une note que j'ai supprimée ?"


def words(text: str) -> list[str]:
    return [w for w, _ in Analyzer(AnalyzerConfig("words", query_language="off")).query_terms(text)]


def test_the_issues_french_question_loses_its_article_and_stop_words() -> None:
    f = query_filter(FRENCH, words(FRENCH))
    assert f == QueryFilter(
        "fr",
        {
            "j": "elided article",
            "comment": "French stop word",
            "une": "French stop word",
            "que": "French stop word",
            "ai": "French stop word",
        },
    )
    assert dropped_text(f) == "Not searched: j' (elided article); comment, une, que, ai (French stop words)"
    terms = Analyzer(AnalyzerConfig("words")).query_terms(FRENCH)
    assert terms == [("retrouver", ["retrouver"]), ("note", ["note"]), ("supprimée", ["supprimée"])]


@pytest.mark.parametrize(
    ("query", "elided"),
    [
        ("l'index d'une note", {"l", "d"}),
        ("qu’il soit", {"qu"}),  # the typographic apostrophe too
        ("dell'app e un'altra nota", {"dell", "un"}),
        ("jusqu'au bout", {"jusqu"}),
        ("don't panic", set()),  # an English contraction is not an elision
        ("James' book", set()),  # nor a possessive
        ("l' index", set()),  # the apostrophe must join two words
    ],
)
def test_elision_is_a_whole_word_before_an_apostrophe_and_a_letter(query: str, elided: set[str]) -> None:
    f = query_filter(query, words(query), "de")  # a German list: only the elision applies to these
    assert {w for w, why in f.dropped.items() if why == "elided article"} == elided


def test_each_language_is_detected_and_uses_its_own_list() -> None:
    cases = {
        "How do I assign a hotkey to a command?": ("en", {"how", "do", "i", "a", "to"}),
        "Jak přiřadit klávesovou zkratku k příkazu?": ("cs", {"jak", "k"}),
        "Як призначити гарячу клавішу команді?": ("uk", {"як"}),
        "Come assegnare una scorciatoia da tastiera a un comando?": ("it", {"come", "una", "da", "a", "un"}),
        "Wie weise ich einem Befehl ein Tastenkürzel zu?": ("de", {"wie", "ich", "einem", "ein", "zu"}),
    }
    for query, (lang, dropped) in cases.items():
        f = query_filter(query, words(query))
        assert (f.language, set(f.dropped)) == (lang, dropped), query


def test_a_query_of_stop_words_only_keeps_them_all() -> None:
    for query in ("the who", "to be or not to be"):
        f = query_filter(query, words(query), "en")
        assert f.dropped == {}
        assert [w for w, _ in Analyzer(AnalyzerConfig("words", query_language="en")).query_terms(query)] == words(query)


def test_no_stop_word_or_a_tie_means_no_language() -> None:
    assert detect_language(["rebase", "onto", "main"]) is None
    assert detect_language(["come", "on"]) is None  # Italian "come", English "on": unsure
    assert detect_language(["install", "python", "with", "pip"]) == "en"
    assert detect_language(["python", "on", "windows"]) is None  # "on": English and French
    assert query_filter("come on", ["come", "on"]).dropped == {}


def test_off_searches_every_word_and_a_named_language_skips_detection() -> None:
    assert query_filter(FRENCH, words(FRENCH), "off") == QueryFilter()
    forced = query_filter("come on", ["come", "on"], "it")  # Italian "come" (how), asked for by name
    assert forced == QueryFilter("it", {"come": "Italian stop word"})
    assert set(QUERY_LANGUAGES) == {"auto", "off", *STOP_WORDS}
    with pytest.raises(ValueError, match="unknown query language 'xx'"):
        AnalyzerConfig(query_language="xx")


def test_query_language_is_not_part_of_the_index_key() -> None:
    assert AnalyzerConfig(query_language="off").key == AnalyzerConfig().key == "combined_5_t0.3"
    assert AnalyzerConfig().with_name("stems").query_language == "auto"  # kept by each part


@pytest.fixture
def french(tmp_path: Path) -> IndexReader:
    folder = write_notes(
        tmp_path / "notes",
        {
            "remboursement.md": "# Politique de remboursement\n\nJ'ai payé. J'ai changé d'avis : que faire, "
            "ai-je droit à un remboursement ? Comment ? Une demande suffit.\n",
            "gerer.md": "# Gérer les notes\n\nPour retrouver une note supprimée, ouvrez la corbeille des notes du "
            "coffre : chaque note supprimée y reste trente jours, puis elle est effacée pour de bon.\n",
            **{f"autre{i}.md": f"# Autre {i}\n\nUne note sur la synchronisation numéro {i}.\n" for i in range(6)},
        },
    )
    lib, _ = build_index(folder, tmp_path / "idx")
    return lib


def test_search_leaves_them_out_ranks_the_note_that_answers_and_says_so(french: IndexReader) -> None:
    off = french.search(FRENCH, SearchParams(replace(AnalyzerConfig(), query_language="off"), k=3))
    auto = french.search(FRENCH, SearchParams(k=3))
    assert off.hits[0].path == "remboursement.md"  # its "j'ai", "que", "comment": the issue's symptom
    assert auto.hits[0].path == "gerer.md"
    assert {t.term for t in auto.terms}.isdisjoint({"j", "ai", "une", "que", "comme", "_j_", "_ai"})
    assert auto.left_out.language == "fr" and off.left_out == QueryFilter()
    doc = auto.to_json()
    assert doc["query_language"] == "fr"
    assert doc["dropped"][:2] == [
        {"word": "j", "why": "elided article"},
        {"word": "comment", "why": "French stop word"},
    ]
    assert not any(r.term in {"ai", "j"} for h in auto.hits for r in h.explain)  # nor in the breakdown


def test_cli_prints_and_returns_what_it_left_out(
    french: IndexReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, idx = str(tmp_path / "notes"), str(tmp_path / "idx")
    assert main(["search", folder, FRENCH, "--index-dir", idx, "--mode", "bm25", "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "(Not searched: j' (elided article); comment, une, que, ai (French stop words))"
    assert "gerer.md" in out.splitlines()[1]
    argv = ["search", folder, FRENCH, "--index-dir", idx, "--mode", "bm25", "--json", "--query-language", "off"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["query_language"], doc["dropped"], doc["hits"][0]["path"]) == (None, [], "remboursement.md")
