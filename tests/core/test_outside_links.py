"""Following links out of the notes folder (Settings or --follow-outside-links) never walks the whole
machine: a link to /, to the home folder, into /proc, /sys, /dev, /run or ragdesk's cache is not
entered, with the reason; other links out are followed as asked. Both walkers, compiled and Python."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdesk.core.loader import LoadOptions
from ragdesk.core.walk import walk_notes

from ..conftest import write_notes


@pytest.mark.usefixtures("text_kernel")
def test_links_to_the_machine_are_refused_even_when_following_links(tmp_path: Path) -> None:
    folder = write_notes(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"})
    elsewhere = write_notes(tmp_path / "elsewhere", {"b.md": "# B\n\nbeta\n"})
    for name, target in [("root", "/"), ("home", os.path.expanduser("~")), ("proc", "/proc/self"),
                         ("sys", "/sys"), ("dev", "/dev"), ("other", str(elsewhere))]:  # fmt: skip
        os.symlink(target, folder / name)
    os.symlink(elsewhere / "b.md", folder / "b-link.md")
    files, skipped = walk_notes(folder, LoadOptions(follow_outside_links=True))
    assert sorted(f.path for f in files) == ["a.md", "b-link.md", "other/b.md"]
    reasons = {s.path: s.reason for s in skipped}
    for name in ("root", "home", "proc", "sys", "dev"):
        assert reasons[name].startswith("the whole machine, the home folder, system or ragdesk's own folders")
    files, skipped = walk_notes(folder, LoadOptions())  # not following: every link out says how to follow
    assert [f.path for f in files] == ["a.md"]
    assert all("--follow-outside-links to follow" in s.reason for s in skipped)
    assert {s.path for s in skipped} == {"root", "home", "proc", "sys", "dev", "other", "b-link.md"}


@pytest.mark.usefixtures("text_kernel")
def test_following_links_out_is_capped_with_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragdesk.core import walk

    monkeypatch.setattr(walk, "MAX_NOTES_FOLLOWING_LINKS", 3)
    folder = write_notes(tmp_path / "notes", {"a.md": "a"})
    elsewhere = write_notes(tmp_path / "elsewhere", {f"n{i}.md": "x" for i in range(5)})
    os.symlink(elsewhere, folder / "big")
    files, skipped = walk_notes(folder, LoadOptions(follow_outside_links=True))
    assert [f.path for f in files] == ["a.md", "big/n0.md", "big/n1.md"]
    assert {s.path: s.reason for s in skipped} == {
        f"big/n{i}.md": "more than 3 notes while following links out of the folder: the first by path are indexed"
        for i in (2, 3, 4)
    }
    assert len(walk_notes(folder, LoadOptions())[0]) == 1  # not following: no cap needed, none applied
