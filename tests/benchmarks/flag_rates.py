"""How often ordinary notes are flagged: as instruction-like text, and as holding a secret, over
every chunk of every note under ../shared/data (none of which holds a real secret).

    python tests/benchmarks/flag_rates.py [FOLDER] [--show 20]

Prints the share of chunks flagged per corpus for each detector, and the first flagged passages so
a person can judge whether each is a false positive.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from ragdesk.core.chunking import ChunkOptions, chunk_note
from ragdesk.core.loader import LoadOptions, read_note
from ragdesk.core.prompt import Excerpt
from ragdesk.core.secrets import find_secrets
from ragdesk.core.walk import walk_notes

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
    secret: Counter[str] = Counter()
    examples: list[str] = []
    secret_examples: list[str] = []
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
            secrets = find_secrets(c.text)
            if secrets:
                secret[corpus] += 1
                if len(secret_examples) < args.show:
                    s0 = secrets[0]
                    secret_examples.append(f"{c.path}:{c.start_line}: {s0.kind}: “{c.text[s0.start : s0.end][:80]}”")
    print("| corpus | chunks | instruction-like | rate | secrets | rate |\n|---|---:|---:|---:|---:|---:|")
    for corpus in sorted(chunks):
        n, f, x = chunks[corpus], flagged[corpus], secret[corpus]
        print(f"| {corpus} | {n} | {f} | {f / n:.4%} | {x} | {x / n:.4%} |")
    total, hits, secrets_total = sum(chunks.values()), sum(flagged.values()), sum(secret.values())
    rate, secret_rate = hits / max(total, 1), secrets_total / max(total, 1)
    print(f"| **all** | {total} | {hits} | {rate:.4%} | {secrets_total} | {secret_rate:.4%} |")
    print(f"\n{len(files)} files in {time.perf_counter() - t0:.0f} s; first flagged passages:", file=sys.stderr)
    for line in examples:
        print("  " + line, file=sys.stderr)
    print("first secrets found:", file=sys.stderr)
    for line in secret_examples:
        print("  " + line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
