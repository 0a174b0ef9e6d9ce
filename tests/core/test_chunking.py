"""Chunking: exact windows for `words`, structure-aware chunks for `markdown`, exact lines and spans."""

from __future__ import annotations

from ragdesk.core.chunking import ChunkOptions, chunk_note
from ragdesk.core.loader import Note


def _note(text: str, path: str = "n.md", body_start: int = 0) -> Note:
    return Note(path=path, text=text, body_start=body_start)


def test_words_chunker_is_the_seed_recipe() -> None:
    text = " ".join(f"w{i}" for i in range(10))
    chunks = chunk_note(_note(text), ChunkOptions("words", size=4, overlap=1))
    assert [c.text for c in chunks] == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_words_chunker_line_numbers() -> None:
    text = "a b\nc d\n\ne f"
    chunks = chunk_note(_note(text), ChunkOptions("words", size=2, overlap=0))
    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(1, 1, "a b"), (2, 2, "c d"), (4, 4, "e f")]


MD = """---
title: T
---
# Setup

Intro paragraph here.

## Linux

Install with apt.

```sh
sudo apt install thing
more code here
```

## Windows

Use the installer.
"""


def test_markdown_sections_headings_and_code_blocks() -> None:
    note = _note(MD, body_start=MD.index("# Setup"))
    chunks = chunk_note(note, ChunkOptions("markdown", size=80, overlap=20))
    assert [c.heading for c in chunks] == ["Setup", "Setup › Linux", "Setup › Windows"]
    assert chunks[0].text == "# Setup\n\nIntro paragraph here."
    assert chunks[1].text.startswith("## Linux") and chunks[1].text.endswith("more code here\n```")
    assert (chunks[1].start_line, chunks[1].end_line) == (8, 15)
    assert (chunks[2].start_line, chunks[2].end_line) == (17, 19)
    assert all(MD[c.start : c.end] == c.text for c in chunks)
    assert "title" not in chunks[0].text


def test_markdown_packs_paragraphs_and_overlaps() -> None:
    paras = [" ".join(f"p{i}w{j}" for j in range(30)) for i in range(4)]
    text = "# H\n\n" + "\n\n".join(paras) + "\n"
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=5))
    # 30-word paragraphs pack two per chunk (the heading line counts too); neighbours share 5 words.
    assert len(chunks) == 2
    assert chunks[0].text.split()[-1] == "p1w29"
    assert chunks[1].text.split()[:5] == [f"p1w{j}" for j in range(25, 30)]
    assert chunks[1].text.split()[-1] == "p3w29"


def test_markdown_splits_overlong_paragraph_with_overlap() -> None:
    text = "# H\n\n" + " ".join(f"w{i}" for i in range(200))
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=20))
    words = [c.text.split() for c in chunks]
    assert words[0][:3] == ["#", "H", "w0"] and len(words[0]) == 80
    assert words[1][0] == "w58" and words[-1][-1] == "w199"
    assert all(len(w) <= 80 for w in words)


def test_empty_and_heading_only_notes() -> None:
    assert chunk_note(_note(""), ChunkOptions()) == []
    assert chunk_note(_note("# Only a heading\n"), ChunkOptions()) == []
