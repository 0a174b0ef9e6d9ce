"""Crash consistency: `ragdesk index` killed (SIGKILL) at random moments leaves the old index or the
new one, never a third thing, and the next build cleans up after it.

    python tests/benchmarks/crash_consistency.py [--kills 40] [--notes 600] [--seed 1]

Each round restores the old index, edits the notes, starts a build (a full one or a refresh, by
turns), kills it after a random delay within the build's measured duration, then opens the index
with every checksum verified and compares what it answers with the two known states. The unit
suite runs a short version (tests/core/test_crash_consistency.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.core.crashes import crash_rounds  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--notes", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        outcome = crash_rounds(Path(tmp), args.kills, args.notes, args.seed)
    print(f"{args.kills} kills: old index {outcome['old']}, new index {outcome['new']}, never a third state")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
