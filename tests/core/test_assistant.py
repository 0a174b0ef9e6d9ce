"""What `ragdesk mcp`'s tools answer (core.assistant), without the protocol: current after an edit,
never waiting on another process's build, bounded, and clean of hidden and control characters."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ragdesk.core import assistant, locks
from ragdesk.core.assistant import NotesDesk, Refused
from ragdesk.core.excerpts import estimate_tokens

from ..conftest import write_notes

NOTES = {"a.md": "# Apples\n\nApples grow on trees.\n", "b.md": "# Pears\n\nPears are sweet.\n"}


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NotesDesk:
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "off")
    monkeypatch.setattr(assistant, "REFRESH_EVERY_S", 0.0)  # every answer looks at the folder
    return NotesDesk([write_notes(tmp_path / "notes", NOTES)], str(tmp_path / "idx"))


def test_an_edit_is_in_the_next_answer(desk: NotesDesk) -> None:
    assert "(no note matches)" in desk.search_notes("zyxwvut")
    (desk.served[0].path / "c.md").write_text("# Quinces\n\nQuinces need zyxwvut cooking.\n", encoding="utf-8")
    assert "[1] (c.md › Quinces, lines 1–3)" in desk.search_notes("zyxwvut")


def test_an_answer_never_waits_for_another_processs_build(desk: NotesDesk) -> None:
    desk.search_notes("apples")  # opened
    (desk.served[0].path / "c.md").write_text("# Quinces\n\nQuinces need zyxwvut cooking.\n", encoding="utf-8")
    held, release = threading.Event(), threading.Event()

    def building() -> None:  # the window's build holding the lock
        with locks.build_lock(Path(desk.served[0].index_dir or "")):
            held.set()
            release.wait(30)

    t = threading.Thread(target=building)
    t.start()
    assert held.wait(10)
    start = time.monotonic()
    try:
        answer = desk.search_notes("zyxwvut")
    finally:
        release.set()
        t.join()
    assert time.monotonic() - start < 5  # answered from the index as it is (it waited for the build before)
    assert "(no note matches)" in answer
    assert "[1] (c.md" in desk.search_notes("zyxwvut")  # the build let go: the edit is read


def test_answers_are_bounded(desk: NotesDesk, monkeypatch: pytest.MonkeyPatch) -> None:
    long = "\n".join(f"line {i} about apples and the orchard" for i in range(30_000))
    (desk.served[0].path / "long.md").write_text("# Long\n\n" + long, encoding="utf-8")
    whole = desk.read_note("long.md", 1, 40_000)
    assert estimate_tokens(whole) <= assistant.ANSWER_TOKENS
    assert "not shown: read_note with start_line=" in whole
    first = desk.read_note("long.md")
    assert first.startswith("long.md, lines 1–200 of 30002\n") and first.endswith("read_note with start_line=201]")
    monkeypatch.setattr(assistant, "ANSWER_TOKENS", 400)
    answer = desk.search_notes("apples orchard", k=20)
    assert estimate_tokens(answer) <= 400 + 40 and "left out to stay under 400 tokens: ask with a smaller k" in answer


def test_hidden_and_control_characters_do_not_reach_the_assistant(desk: NotesDesk) -> None:
    text = "# Hidden\n\nplums \u202eesrever\u202c and zero\u200bwidth \U000e0041tag and \x1b]0;title\x07 plums\n"
    (desk.served[0].path / "h.md").write_text(text, encoding="utf-8")
    for answer in (desk.search_notes("plums"), desk.read_note("h.md")):
        assert "plums" in answer
        assert not any(c in answer for c in "\u200b\U000e0041\x1b\x07"), answer
        assert "\\u001b]0;title\\u0007" in answer


def test_a_secret_typed_into_the_query_is_not_echoed(desk: NotesDesk) -> None:
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    for answer in (desk.search_notes(f"apples {key}"), desk.why_not(f"apples {key}", "a.md")):
        assert key not in answer and "[REDACTED" in answer


def test_several_folders_are_told_apart_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    work = write_notes(tmp_path / "work", {"a.md": "# Plans\n\nApples for the office.\n"})
    home = write_notes(tmp_path / "x" / "notes", NOTES)
    desk = NotesDesk([home, work])
    answer = desk.search_notes("apples", k=4)
    assert "[1] (notes/a.md › Apples" in answer and "(work/a.md › Plans" in answer
    assert desk.read_note("work/a.md").startswith("work/a.md, lines 1–3 of 3")
    with pytest.raises(Refused, match="start the path with the folder it is in \\(notes, work\\)"):
        desk.read_note("a.md")
    with pytest.raises(Refused, match="--index-dir serves one folder"):
        NotesDesk([home, work], str(tmp_path / "idx"))
