"""A refresh told which paths changed looks at them alone and finds what a whole walk finds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdesk.core.build import build_index
from ragdesk.core.loader import LoadOptions
from ragdesk.core.params import IndexSettings
from ragdesk.core.reader import IndexReader
from ragdesk.core.rewalk import rewalk
from ragdesk.core.walk import Walk, walk_folder

from ..conftest import write_notes

SETTINGS = IndexSettings(load=LoadOptions(max_bytes=400))
NOTES = {
    "a.md": "# A\nalpha words here\n",
    "sub/b.md": "# B\nbeta words here\n",
    "sub/c.md": "# C\ngamma words\n",
    "big.md": "# Big\n" + "large " * 100,  # over the 400-byte limit: skipped by the walk
    "bad.md": b"\x89PNG\r\n\x1a\n\x00\x00binary",  # read, then skipped (not text)
    "drafts/d.md": "# D\ndelta\n",
    ".ragdeskignore": "drafts/\n!drafts/keep.md\nsecret.md\n",  # a folder left out is not walked into at all
}


def built(tmp_path: Path) -> tuple[Path, Path, IndexReader]:
    notes = write_notes(tmp_path / "notes", NOTES).resolve()
    lib, _ = build_index(notes, tmp_path / "idx", SETTINGS)
    return notes, tmp_path / "idx", lib


def same_walk(got: Walk | None, want: Walk) -> None:
    assert got is not None
    assert got.paths == want.paths
    assert got.sizes.tolist() == want.sizes.tolist() and got.mtimes.tolist() == want.mtimes.tolist()
    assert [(s.path, s.reason) for s in got.skipped] == [(s.path, s.reason) for s in want.skipped]


def test_the_named_paths_give_the_walk_of_the_whole_folder(tmp_path: Path) -> None:
    notes, _, lib = built(tmp_path)
    assert [s.path for s in lib.skipped] == ["bad.md", "big.md"]  # the case the rebuilt last walk must hold
    (notes / "a.md").write_text("# A\nalpha edited\n", encoding="utf-8")  # edited in place
    (notes / "sub" / "c.md").unlink()  # deleted
    (notes / "sub" / "e.md").write_text("# E\nepsilon\n", encoding="utf-8")  # new, in a folder the walk knew
    (notes / "big.md").write_text("# Big\nsmall now\n", encoding="utf-8")  # under the limit now: a note
    (notes / "sub" / "b.md").write_text("# B\n" + "grown " * 100, encoding="utf-8")  # over it now: skipped
    (notes / "secret.md").write_text("# S\nignored by pattern\n", encoding="utf-8")
    (notes / "drafts" / "f.md").write_text("# F\nin an ignored folder\n", encoding="utf-8")
    (notes / "drafts" / "keep.md").write_text("# K\nnot matched, but in a folder never walked\n", encoding="utf-8")
    (notes / ".hidden.md").write_text("# H\n", encoding="utf-8")
    (notes / "picture.png").write_bytes(b"\x89PNG")
    changed = ["a.md", "sub/c.md", "sub/e.md", "big.md", "sub/b.md", "secret.md", "drafts/f.md", ".hidden.md"]
    changed += ["drafts/keep.md"]
    changed += ["picture.png", "../elsewhere.md"]
    got = rewalk(lib, notes, SETTINGS.load, [str(notes / p) for p in changed])
    same_walk(got, walk_folder(notes, SETTINGS.load))
    assert got is not None and "sub/e.md" in got.paths and "sub/c.md" not in got.paths


def test_a_path_a_whole_walk_must_judge_asks_for_one(tmp_path: Path) -> None:
    notes, _, lib = built(tmp_path)
    (notes / "folder.md").mkdir()  # a folder named like a note
    os.symlink(notes / "a.md", notes / "link.md")  # a link: inside or out, a loop or not
    os.symlink(notes / "sub", notes / "linked")  # a note reached through a linked folder
    for path in ("folder.md", "link.md", "linked/b.md"):
        assert rewalk(lib, notes, SETTINGS.load, [str(notes / path)]) is None, path
    os.symlink(notes, tmp_path / "alias")  # the watcher reporting the folder by another name
    assert rewalk(lib, notes, SETTINGS.load, [str(tmp_path / "alias" / "a.md")]) is None


def test_a_refresh_of_named_paths_equals_a_full_refresh_and_looks_nowhere_else(tmp_path: Path) -> None:
    notes, idx, lib = built(tmp_path)
    (notes / "a.md").write_text("# A\nalpha zyxwvut\n", encoding="utf-8")
    (notes / "sub" / "new.md").write_text("# N\nnew qwertz\n", encoding="utf-8")
    named = frozenset(str(notes / p) for p in ("a.md", "sub/new.md"))
    targeted, report = build_index(notes, idx, SETTINGS, previous=lib, changed=named)
    assert (report.changed, report.added, report.removed, report.walk_started) == (1, 1, 0, 0.0)
    reference, _ = build_index(notes, tmp_path / "idx-reference", SETTINGS)  # a whole build of the same folder
    assert targeted.note_paths == reference.note_paths and targeted.n_chunks == reference.n_chunks
    for query in ("zyxwvut", "qwertz", "words here"):
        got = [(h.path, h.score) for h in targeted.search(query).hits]
        assert got == [(h.path, h.score) for h in reference.search(query).hits] and got, query
    # what the watcher did not name is not looked at: the check that follows a watched refresh finds it
    (notes / "sub" / "c.md").write_text("# C\ngamma unnamed\n", encoding="utf-8")
    again, report = build_index(notes, idx, SETTINGS, previous=targeted, changed=frozenset({str(notes / "a.md")}))
    assert not report.rebuilt and not again.search("unnamed").hits
    checked, report = build_index(notes, idx, SETTINGS, previous=again)
    assert report.changed == 1 and report.walk_started > 0
    assert [h.path for h in checked.search("unnamed").hits] == ["sub/c.md"]


@pytest.mark.parametrize("follow", [False, True])
def test_a_new_link_named_by_the_watcher_is_judged_by_a_whole_walk(tmp_path: Path, follow: bool) -> None:
    settings = IndexSettings(load=LoadOptions(max_bytes=400, follow_outside_links=follow))
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\nalpha\n"}).resolve()
    lib, _ = build_index(notes, tmp_path / "idx", settings)
    outside = write_notes(tmp_path / "outside", {"private.md": "# P\nprivate secret\n"})
    os.symlink(outside / "private.md", notes / "private.md")
    named = frozenset({str(notes / "private.md")})
    got, report = build_index(notes, tmp_path / "idx", settings, previous=lib, changed=named)
    assert report.walk_started > 0  # walked after all
    assert bool(got.search("private secret").hits) == follow
    assert any(s.path == "private.md" for s in got.skipped) != follow
