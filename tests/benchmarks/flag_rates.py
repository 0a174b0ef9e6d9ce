"""The injection flag judged like a classifier, and both detectors' flags per corpus: recall on the
labelled instructions (tests/data/injections/positives.txt), and how many ordinary chunks of
../shared/data are flagged as instruction-like or as holding a secret.

    python tests/benchmarks/flag_rates.py [--show 20]

Prints recall per disguise, the flag rates per corpus, and the first flagged passages so a person
can judge each. (Secret detectors are compared in secret_detectors.py.)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from ragdesk.core.excerpts import Excerpt
from ragdesk.core.secrets import find_secrets

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.data import negatives  # noqa: E402
from tests.data.labelled import INJECTIONS, load  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=25, help="flagged passages to print")
    args = parser.parse_args()
    records = load(INJECTIONS)
    total: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    for r in records:
        findings = Excerpt("note.md", "", 1, 1, r.text).findings
        total[r.cls] += 1
        caught[r.cls] += r.hit_by([(f.start, f.end) for f in findings])
    print(f"Instructions flagged: {sum(caught.values())}/{len(records)} ({sum(caught.values()) / len(records):.1%})\n")
    print("| disguise | flagged |\n|---|---:|")
    for cls in total:
        print(f"| {cls} | {caught[cls]}/{total[cls]} |")
    t0 = time.perf_counter()
    chunks = negatives.cached_shared_chunks()
    per: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    secret: Counter[str] = Counter()
    examples: list[str] = []
    for path, heading, text in chunks:
        corpus = path.split("/", 1)[0]
        per[corpus] += 1
        findings = Excerpt(path, heading, 1, 1, text).findings
        if findings:
            flagged[corpus] += 1
            if len(examples) < args.show:
                examples.append(f"{path}: {findings[0].reason}: “{findings[0].text[:80]}”")
        secret[corpus] += bool(find_secrets(text))
    print("\n| corpus | chunks | instruction-like | rate | secrets | rate |\n|---|---:|---:|---:|---:|---:|")
    for corpus in sorted(per):
        n, f, x = per[corpus], flagged[corpus], secret[corpus]
        print(f"| {corpus} | {n} | {f} | {f / n:.4%} | {x} | {x / n:.4%} |")
    n, f, x = sum(per.values()), sum(flagged.values()), sum(secret.values())
    print(f"| **all** | {n} | {f} | {f / max(n, 1):.4%} | {x} | {x / max(n, 1):.4%} |")
    print(f"\n{n} chunks in {time.perf_counter() - t0:.0f} s; first flagged passages:", file=sys.stderr)
    for line in examples:
        print("  " + line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
