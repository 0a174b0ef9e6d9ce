"""A .ragdeskignore pattern that cannot be used stops indexing with one line naming the file and the
line, never a traceback or a build that hangs on one pattern."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ragdesk.cli import main

from ..conftest import write_notes


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("!", "'!' is not a valid pattern (Invalid git pattern: '!')"),
        ("a/**/" * 14, "has more than 6 '**' (each one more can multiply the time to match a deep path)"),
    ],
)
def test_an_unusable_pattern_is_named_with_its_line(tmp_path: Path, capsys, pattern: str, says: str) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(
        tmp_path / "n", {"a.md": "# A\n\nrebase\n", ".ragdeskignore": f"drafts/\n{pattern}\n", "a/a/a/a/b.md": "x"}
    )
    for command in (["index", str(folder)], ["search", str(folder), "rebase"], ["prompt", str(folder), "rebase"]):
        t0 = time.monotonic()
        assert main([*command, "--index-dir", str(tmp_path / "idx")]) == 2
        err = capsys.readouterr().err
        assert f"{folder / '.ragdeskignore'} line 2: " in err and says in err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert time.monotonic() - t0 < 5


def test_usable_patterns_still_exclude(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(
        tmp_path / "n", {"a.md": "# A\n\nrebase\n", "drafts/b.md": "# B\n\nrebase\n", ".ragdeskignore": "drafts/\n"}
    )
    assert main(["search", str(folder), "rebase", "--index-dir", str(tmp_path / "idx"), "--json"]) == 0
    assert "drafts/b.md" not in capsys.readouterr().out
