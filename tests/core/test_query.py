"""The query language's parser: operators, phrases, filters, what stays words, and what is said."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from ragdesk.core.query import Clause, Filter, parse


@pytest.mark.parametrize(
    "raw",
    [
        "how do I rename a git branch?",
        "C++: what does std::move do",  # a word and a colon is not a filter
        "meeting at 10:30 about https://example.com/a?b=c",  # times and URLs stay words
        "Path: the way a file is found",  # field names are lower case only
        "e-mail and x-ray, don't",  # a hyphen inside a word, an apostrophe
        "what is or and not",  # lower-case operators are words
        "",
    ],
)
def test_a_question_without_operators_parses_to_itself(raw: str) -> None:
    q = parse(raw)
    assert (q.text, q.question, q.plain, q.searched_as(), q.problems) == (raw, raw, True, "", ())


def test_phrases_exclusions_and_required_words() -> None:
    q = parse('"exact phrase" rebase -interactive +git -"merge commit"')
    assert q.required == ((Clause("exact phrase", True),), (Clause("git"),))
    assert q.excluded == (Clause("interactive"), Clause("merge commit", True))
    assert q.text == "exact phrase rebase git"
    assert q.question == '"exact phrase" rebase git'
    assert q.searched_as() == (
        'words: exact phrase rebase git; must hold: "exact phrase"; must hold: git; '
        'left out: interactive, "merge commit"'
    )


def test_and_not_or_as_in_boolean_search() -> None:
    q = parse("git AND NOT rebase")
    assert (q.text, q.required, q.excluded) == ("git", ((Clause("git"),),), (Clause("rebase"),))
    either = parse('"rename a branch" OR "move a branch" git')
    assert either.required == ((Clause("rename a branch", True), Clause("move a branch", True)),)
    assert either.question == '"rename a branch" OR "move a branch" git'
    words = parse("vim OR emacs")  # plain words already rank by any of them: OR is not a word
    assert (words.text, words.required, words.plain) == ("vim emacs", (), True)
    assert parse("(vim OR emacs) AND tmux").required == ((Clause("vim"), Clause("emacs")), (Clause("tmux"),))


def test_filters_with_quotes_negation_and_non_ascii_names() -> None:
    q = parse('škola path:"Moje poznámky/Škola" -path:archiv ext:.PDF tag:project/alpha title:Plán after:2025-11')
    assert q.filters == (
        Filter("path", "Moje poznámky/Škola"),
        Filter("path", "archiv", True),
        Filter("ext", ".PDF"),
        Filter("tag", "project/alpha"),
        Filter("title", "Plán"),
        Filter("after", "2025-11"),
    )
    assert q.text == q.question == "škola"
    assert "folder Moje poznámky/Škola and folder not archiv" in q.searched_as()
    data = json.loads(json.dumps(q.to_json()))
    assert data["filters"][1] == {"field": "path", "value": "archiv", "negated": True}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("notes path: on disk", "path: needs a folder name"),
        ("after:yesterday meeting", 'after: needs a date like 2025, 2025-11 or 2025-11-03 ("yesterday" is not one)'),
        ("before:2025-13 x", 'before: needs a date like 2025, 2025-11 or 2025-11-03 ("2025-13" is not one)'),
        ("-tag: x", "tag: needs a tag name"),
    ],
)
def test_what_does_not_parse_is_searched_as_words_and_said(raw: str, problem: str) -> None:
    q = parse(raw)
    assert q.problems == (problem,)
    assert not q.filters and not q.excluded  # nothing left out on a mistake
    assert q.text == raw


def test_an_unclosed_quote_runs_to_the_end_and_says_so() -> None:
    q = parse('rebase "interactive mode')
    assert q.required == ((Clause("interactive mode", True),),)
    assert q.problems == ("a quote was not closed: the phrase runs to the end",)


@pytest.mark.parametrize(
    ("value", "start", "end"),
    [
        ("2025", dt.datetime(2025, 1, 1), dt.datetime(2026, 1, 1)),
        ("2025-12", dt.datetime(2025, 12, 1), dt.datetime(2026, 1, 1)),
        ("2025-11-03", dt.datetime(2025, 11, 3), dt.datetime(2025, 11, 4)),
    ],
)
def test_dates_name_a_year_a_month_or_a_day(value: str, start: dt.datetime, end: dt.datetime) -> None:
    assert Filter("after", value).period() == (start.timestamp(), end.timestamp())


QUESTIONS = Path(__file__).parents[1] / "data" / "questions"


def test_the_eight_question_sets_parse_to_themselves() -> None:
    """Plain questions are searched exactly as before: every question of the eight sets is plain."""
    files = sorted(QUESTIONS.glob("*.jsonl"))
    assert len(files) == 8
    questions = [json.loads(line)["question"] for f in files for line in f.read_text().splitlines() if line.strip()]
    assert len(questions) >= 240
    assert [q for q in questions if parse(q).text != q or not parse(q).plain or parse(q).problems] == []


def test_scifact_claims_without_quotes_parse_to_themselves(shared_data: Path) -> None:
    """Signed numbers ("E2f-1, -2, -3", "+1 nucleosomes") are numbers, not exclusions."""
    claims = [json.loads(line)["text"] for line in (shared_data / "beir-scifact" / "queries.jsonl").open()]
    changed = [c for c in claims if parse(c).text != c or not parse(c).plain]
    assert len(claims) == 1109
    assert changed == [c for c in claims if '"' in c] and len(changed) == 2
