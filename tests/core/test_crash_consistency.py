"""kill -9 of a build at random moments: the index is the old one or the new one, never a third thing
(a short run of tests/benchmarks/crash_consistency.py, which does 40 kills)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .crashes import crash_rounds


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_killed_builds_leave_the_old_or_the_new_index(tmp_path: Path) -> None:
    """Killed at random: each round the old index or the new one, as CURRENT says (checked per round)."""
    outcome = crash_rounds(tmp_path, kills=8, notes=300, seed=7, say=False)
    assert outcome["old"] + outcome["new"] == 8


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_build_killed_as_it_starts_writing_leaves_the_old_index(tmp_path: Path) -> None:
    """Killed at its first write into the index folder (refreshes and full builds by turns): nothing is
    published, the old index answers as before, and the next build finds no temporaries."""
    outcome = crash_rounds(tmp_path, kills=4, notes=300, seed=7, say=False, at_first_write=True)
    assert outcome == {"old": 4, "new": 0, "published": 0}
