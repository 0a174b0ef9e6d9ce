"""Loading: every odd file is skipped or decoded with a visible reason, never a crash or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdesk.core.loader import LoadOptions, Note, Skipped, decode, parse_front_matter, read_note
from ragdesk.core.walk import walk_notes

from ..conftest import write_notes


def _load(root: Path, options: LoadOptions) -> tuple[list[Note], list[Skipped]]:
    """Every note of `root` read, and every file skipped on the walk or on reading."""
    files, skipped = walk_notes(root, options)
    notes = []
    for f in files:
        note, skip = read_note(f)
        notes += [note] if note is not None else []
        skipped += [skip] if skip is not None else []
    return notes, skipped


def test_walk_skips_and_reports(tmp_path: Path, text_kernel: str) -> None:
    root = write_notes(
        tmp_path / "n",
        {
            "a.md": "# A\n\nhello",
            "sub/b.txt": "plain",
            ".obsidian/workspace.md": "hidden",
            "node_modules/x.md": "dependency",
            "image.png": b"\x89PNG....",
            "fake.md": b"\x89PNG\r\n\x1a\n\x00\x00binary",
            "nul.txt": b"abc\x00def",
            "big.md": "x" * 2000,
            "latin.txt": "caf\xe9 cr\xe8me".encode("cp1252"),
            "bom.md": b"\xef\xbb\xbfwith bom",
            "utf16.txt": "wide text".encode("utf-16"),
            "ignored/secret.md": "private",
            "drafts/keep.md": "keep me",
        },
    )
    (root / ".ragdeskignore").write_text("ignored/\n*.tmp.md\n", encoding="utf-8")
    (root / "folder.md").mkdir()
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "loop").symlink_to(root)
    os.mkfifo(root / "pipe.md")
    notes, skipped = _load(root, LoadOptions(max_bytes=1000))
    paths = [n.path for n in notes]
    assert paths == ["a.md", "bom.md", "drafts/keep.md", "latin.txt", "sub/b.txt", "utf16.txt"]
    reasons = {s.path: s.reason for s in skipped}
    assert reasons["fake.md"].startswith("binary file")
    assert reasons["nul.txt"].startswith("binary file")
    assert reasons["big.md"].startswith("too large")
    assert reasons["dangling.md"] == "dangling symbolic link"
    assert reasons["folder.md"] == "is a folder, not a note file"
    assert reasons["pipe.md"].startswith("not a regular file")
    assert "decoded as cp1252" in reasons["latin.txt"]
    assert "UTF-16" in reasons["utf16.txt"]
    assert "loop/a.md" not in reasons and "loop/a.md" not in paths  # the link back into the walk is not followed
    by_path = {n.path: n for n in notes}
    assert by_path["latin.txt"].text == "café crème"
    assert by_path["bom.md"].text == "with bom"
    assert by_path["utf16.txt"].text == "wide text"
    assert not any(s.path.startswith(("ignored", ".obsidian", "node_modules")) for s in skipped)


def test_walk_follows_links_once_and_reads_names_in_any_script(tmp_path: Path, text_kernel: str) -> None:
    """A link to a folder is entered (once: a second link to it is a loop); folders are entered in
    name order, so which link counts as the loop is the same on every file system; names that are
    not ASCII match the note types as Python's str.lower does."""
    root = write_notes(
        tmp_path / "n",
        {"Poznámky/Úvod.MD": "# Úvod", "real/in.md": "inside", "x/Ω.txt": "omega", "x/ß.png": "not a note"},
    )
    (root / "Složka.md").mkdir()  # a folder named like a note, not ASCII
    (root / "a-link").symlink_to(root / "real", target_is_directory=True)
    (root / "b-link.md").symlink_to(root / "real", target_is_directory=True)
    files, skipped = walk_notes(root, LoadOptions())
    assert [f.path for f in files] == ["Poznámky/Úvod.MD", "a-link/in.md", "x/Ω.txt"]
    assert [(s.path, s.reason) for s in skipped] == [
        ("Složka.md", "is a folder, not a note file"),
        ("b-link.md", "folder named like a note (link loop)"),
    ]
    by_path = {f.path: f for f in files}
    assert by_path["x/Ω.txt"].size == len("omega") and by_path["x/Ω.txt"].abspath == str(root / "x" / "Ω.txt")


def test_a_large_folder_is_stated_in_threads_as_in_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past 2,048 notes the compiled walk stats them in threads, a folder at a time: every size,
    mtime and skip reason is the Python walk's, also for a file deleted, a link left dangling or a
    pipe among them."""
    from ragdesk.core import kernels

    if not kernels.has_walk():
        pytest.skip("the compiled walk is not built here")
    root = tmp_path / "n"
    for i in range(3000):
        folder = root / f"f{i % 37:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i:04d}.md").write_text("x" * (i % 50), encoding="utf-8")
        os.utime(folder / f"n{i:04d}.md", ns=(10**18 + i, 10**18 + 7 * i))
    (root / "f03" / "gone.md").symlink_to(root / "nowhere.md")
    os.mkfifo(root / "f05" / "pipe.md")
    compiled = walk_notes(root, LoadOptions())
    monkeypatch.setattr(kernels, "TEXT", None)
    python = walk_notes(root, LoadOptions())
    assert len(compiled[0]) == 3000 and compiled == python
    assert {(f.size, f.mtime_ns) for f in compiled[0] if f.path == "f10/n0010.md"} == {(10, 10**18 + 70)}
    assert [s.reason for s in compiled[1]] == ["dangling symbolic link", "not a regular file (pipe, socket or device)"]


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="notes folder not found"):
        walk_notes(tmp_path / "nope")


def test_front_matter_metadata_and_body() -> None:
    text = '---\ntitle: "My Note"\naliases: [one, two]\ntags:\n  - a\n  - b\npermalink: x\n---\n# Body\n'
    meta, start = parse_front_matter(text)
    assert meta["title"] == "My Note"
    assert meta["aliases"] == ["one", "two"]
    assert meta["tags"] == ["a", "b"]
    assert text[start:] == "# Body\n"


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: no closing fence\n# Body\n",
        "---\nthis is not yaml at all\n---\nbody",
        "----\nnot front matter\n",
    ],
)
def test_broken_front_matter_is_text(text: str) -> None:
    assert parse_front_matter(text) == ({}, 0)


def test_decode_fallbacks() -> None:
    assert decode("čeština".encode())[0] == "čeština"
    text, enc, reason = decode(b"\x93quoted\x94")
    assert text == "\u201cquoted\u201d" and enc == "cp1252" and reason and "byte 0" in reason
    assert decode(b"%PDF-1.4")[0] is None


def test_hashtags_are_obsidian_s_outside_code_each_once() -> None:
    from ragdesk.core.loader import hashtags

    text = (
        "#start of a line, #project/alpha and #idea, again #idea\n"
        "not a tag: issue #123, [link](#anchor), x#y, # Heading, ## Sub\n"
        "```python\n#include <stdio.h>  # comment #incode\n```\n"
        "~~~\n#tilde\n```\n#stillcode\n~~~\n"
        "#after_code #2025plan\n"
        "```\n#unclosed fence: it hides nothing\n"
    )
    assert hashtags(text) == ["start", "project/alpha", "idea", "after_code", "2025plan", "unclosed"]
