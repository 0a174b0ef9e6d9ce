"""How often ordinary notes are flagged as instruction-like: every chunk of every note under ../shared/data.

    python tests/benchmarks/injection_flag_rate.py [FOLDER] [--show 20]

Prints the share of chunks (and sources) flagged per corpus, and the first flagged passages so a
person can judge whether each is a false positive.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from ragdesk.core.chunking import ChunkOptions, chunk_note
from ragdesk.core.loader import LoadOptions, read_note, walk_notes
from ragdesk.core.prompt import Excerpt

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(SHARED))
    parser.add_argument("--show", type=int, default=25, help="flagged passages to print")
    args = parser.parse_args()
    root = Path(args.folder)
    t0 = time.perf_counter()
    files, _ = walk_notes(root, LoadOptions(extensions=(".md", ".texy", ".txt", ".rst", ".org")))
    chunks: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    examples: list[str] = []
    for f in files:
        corpus = f.path.split("/", 1)[0]
        note, _ = read_note(f)
        if note is None:
            continue
        for c in chunk_note(note, ChunkOptions()):
            chunks[corpus] += 1
            findings = Excerpt(c.path, c.heading, c.start_line, c.end_line, c.text).findings
            if findings:
                flagged[corpus] += 1
                if len(examples) < args.show:
                    examples.append(f"{c.path}:{c.start_line}: {findings[0].reason}: “{findings[0].text[:80]}”")
    print("| corpus | chunks | flagged | rate |\n|---|---:|---:|---:|")
    for corpus in sorted(chunks):
        print(f"| {corpus} | {chunks[corpus]} | {flagged[corpus]} | {flagged[corpus] / chunks[corpus]:.4%} |")
    total, hits = sum(chunks.values()), sum(flagged.values())
    print(f"| **all** | {total} | {hits} | {hits / max(total, 1):.4%} |")
    print(f"\n{len(files)} files in {time.perf_counter() - t0:.0f} s; first flagged passages:", file=sys.stderr)
    for line in examples:
        print("  " + line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
