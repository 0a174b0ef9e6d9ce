"""Chunking: exact windows for `words`, structure-aware chunks for `markdown`, exact lines and spans."""

from __future__ import annotations

import pytest

from ragdesk.core.chunking import ChunkOptions, chunk_note
from ragdesk.core.loader import Note

pytestmark = pytest.mark.usefixtures("text_kernel")  # every test: compiled cuts and the Python twin


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


def test_markdown_small_note_is_one_chunk() -> None:
    note = _note(MD, body_start=MD.index("# Setup"))
    (chunk,) = chunk_note(note, ChunkOptions("markdown", size=80, overlap=20))
    assert chunk.heading == "Setup" and chunk.text == MD[note.body_start :].rstrip()
    assert (chunk.start_line, chunk.end_line) == (4, 19)
    assert "title" not in chunk.text


def test_markdown_cuts_at_headings_then_blocks_and_keeps_code_whole() -> None:
    note = _note(MD, body_start=MD.index("# Setup"))
    chunks = chunk_note(note, ChunkOptions("markdown", size=10, overlap=2, min_fill=0.5))
    assert [c.heading for c in chunks] == ["Setup", "Setup › Linux", "Setup › Linux", "Setup › Windows"]
    assert chunks[0].text == "# Setup\n\nIntro paragraph here."
    assert chunks[1].text == "## Linux\n\nInstall with apt."
    assert chunks[2].text.startswith("```sh") and chunks[2].text.endswith("more code here\n```")
    assert [(c.start_line, c.end_line) for c in chunks] == [(4, 6), (8, 10), (12, 15), (17, 19)]
    assert all(MD[c.start : c.end] == c.text for c in chunks)


def test_markdown_packs_paragraphs_without_overlap_at_paragraph_edges() -> None:
    paras = [" ".join(f"p{i}w{j}" for j in range(30)) for i in range(4)]
    text = "# H\n\n" + "\n\n".join(paras) + "\n"
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=5, min_fill=0.5))
    # The best cut in words 40..80 is the paragraph edge at word 62; whole paragraphs need no overlap.
    assert [(c.text.split()[0], c.text.split()[-1]) for c in chunks] == [("#", "p1w29"), ("p2w0", "p3w29")]


def test_markdown_prefers_sentence_ends_and_overlaps_inside_paragraphs() -> None:
    text = "One two three four five six. Seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen end."
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=10, overlap=2, min_fill=0.5))
    assert chunks[0].text == "One two three four five six."
    assert chunks[1].text.startswith("five six. Seven")
    assert chunks[-1].text.endswith("sixteen end.")


def _sections(n: int, words: int) -> str:
    return "\n\n".join(f"## S{i}\n\n" + " ".join(f"s{i}w{j}" for j in range(words)) for i in range(n)) + "\n"


def test_default_chunks_end_only_in_the_last_tenth_preferring_headings() -> None:
    """min_fill 0.9 (the default): a chunk ends at the best boundary within words 72..80."""
    text = _sections(6, 36)  # 38 words a section: headings at words 38, 76, 114, 152, 190
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=20))
    words = [c.text.split() for c in chunks]
    assert [len(w) for w in words] == [76, 76, 76]  # the headings at 76 and 152 end chunks; 38 and 114 do not
    assert [c.heading for c in chunks] == ["S0", "S2", "S4"]
    assert [w[:2] for w in words] == [["##", "S0"], ["##", "S2"], ["##", "S4"]]  # no overlap at a heading
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_default_chunks_cut_mid_section_with_overlap_when_no_boundary_is_near_size() -> None:
    text = _sections(6, 30)  # 32 words a section: no heading or paragraph edge within words 72..80
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=20))
    words = [c.text.split() for c in chunks]
    assert [len(w) for w in words] == [80, 80, 72]
    assert [(w[0], w[-1]) for w in words] == [("##", "s2w13"), ("s1w26", "s4w9"), ("s3w22", "s5w29")]
    assert [c.heading for c in chunks] == ["S0", "S1", "S3"]
    # With min_fill 0.5 the last heading past word 40 ends a chunk instead: sections stay whole.
    halves = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=20, min_fill=0.5))
    assert [(c.heading, len(c.text.split())) for c in halves] == [("S0", 64), ("S2", 64), ("S4", 64)]


def test_markdown_splits_overlong_paragraph_with_overlap() -> None:
    text = "# H\n\n" + " ".join(f"w{i}" for i in range(200))
    chunks = chunk_note(_note(text), ChunkOptions("markdown", size=80, overlap=20))
    words = [c.text.split() for c in chunks]
    assert words[0][:3] == ["#", "H", "w0"] and len(words[0]) == 80
    assert words[1][0] == "w58" and words[-1][-1] == "w199"
    assert all(len(w) <= 100 for w in words)  # the last chunk may run a quarter over rather than leave a stub


def test_empty_and_heading_only_notes() -> None:
    assert chunk_note(_note(""), ChunkOptions()) == []
    (only,) = chunk_note(_note("# Only a heading\n"), ChunkOptions())
    assert only.text == "# Only a heading" and only.heading == "Only a heading"
