"""A note that failed to read for a reason that passes (the folder renamed for a moment, a permission
fixed with chmod, an I/O error) is tried again at each refresh whatever its modification time: it
was carried as skipped for good, and `index` and `index --verify` said "already current" (issue 52)."""

from __future__ import annotations

import builtins
import errno
import json
import os
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core import build, loader
from ragdesk.core.build import build_index

from ..conftest import write_notes

NOTES = {f"n{i}.md": f"# Note {i}\n\nabout topic{i} and rebase\n" for i in range(6)}


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """File names whose reads fail with `No such file` while they are in the set (as if gone)."""
    gone: set[str] = set()
    real = builtins.open

    def opening(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(path, (str, os.PathLike)) and os.path.basename(os.fspath(path)) in gone:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(loader, "open", opening, raising=False)
    monkeypatch.setattr(build, "open", opening, raising=False)
    return gone


def _index(folder: Path, idx: Path, capsys, *extra: str) -> dict:  # type: ignore[no-untyped-def]
    assert main(["index", str(folder), "--index-dir", str(idx), "--json", "--no-dense", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_notes_that_could_not_be_read_are_read_once_they_can(tmp_path: Path, failing: set[str], capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "n", NOTES)
    idx = tmp_path / "idx"
    failing.update({"n2.md", "n4.md"})
    first = _index(folder, idx, capsys)
    assert [(s["path"], s["reason"]) for s in first["skipped"]] == [
        ("n2.md", "cannot be read: No such file or directory"),
        ("n4.md", "cannot be read: No such file or directory"),
    ]
    assert first["files"] == 4
    failing.discard("n2.md")  # back; n4.md still failing
    second = _index(folder, idx, capsys)
    assert second["rebuilt"] is True and second["files"] == 5 and [s["path"] for s in second["skipped"]] == ["n4.md"]
    third = _index(folder, idx, capsys, "--verify")
    assert third["rebuilt"] is False  # still failing, nothing else changed: no new generation
    failing.clear()
    fourth = _index(folder, idx, capsys)
    assert fourth["rebuilt"] is True and fourth["files"] == 6 and fourth["skipped"] == []
    assert main(["search", str(folder), "topic4", "--index-dir", str(idx), "--json", "--no-refresh"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["path"] == "n4.md"


def test_the_report_says_when_each_skip_was_last_tried(tmp_path: Path, failing: set[str]) -> None:
    folder = write_notes(tmp_path / "n", NOTES)
    failing.add("n1.md")
    reader, _ = build_index(folder, tmp_path / "idx", workers=1)
    (row,) = [r for r in reader.report() if r["status"] == "skipped"]
    first = row["tried_at"]
    assert first >= reader.built_at - 60 and row["indexed_at"] is None
    again, report = build_index(folder, tmp_path / "idx", previous=reader, workers=1)
    assert report.rebuilt is False
    (row,) = [r for r in again.report() if r["status"] == "skipped"]
    assert row["tried_at"] > first  # tried again, said so, without a new generation
    assert all(r["tried_at"] is None for r in again.report() if r["status"] == "indexed")


def test_a_skip_stored_before_it_said_passing_is_retried_by_its_reason() -> None:
    old = loader.Skipped("a.md", "cannot be read: Permission denied", False, 10, 5)
    assert old.may_pass and not loader.Skipped("b.md", "binary file", False, 10, 5).may_pass
