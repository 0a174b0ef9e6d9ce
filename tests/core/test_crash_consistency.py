"""kill -9 of a build at random moments: the index is the old one or the new one, never a third thing
(a short run of tests/benchmarks/crash_consistency.py, which does 40 kills)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .crashes import crash_rounds


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_killed_builds_leave_the_old_or_the_new_index(tmp_path: Path) -> None:
    outcome = crash_rounds(tmp_path, kills=10, notes=300, seed=7, say=False)
    assert outcome["old"] + outcome["new"] == 10
    assert outcome["old"] >= 1  # some kills landed before the new index was published
