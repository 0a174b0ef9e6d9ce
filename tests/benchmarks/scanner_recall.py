"""Recall of ragdesk's secret detector on positives written outside its rules: gitleaks' own true
positives (tests/data/secrets/scanners/gitleaks.txt) per rule file, and the forms of issue 59 written
before their rules (tests/data/secrets/fresh.txt, and rounds of other forms in fresh2.txt to fresh4.txt)
per form; each the development two thirds apart from
the held-out third (kept out of rule development; its figure is the promise, issue 59). A gitleaks
record counts as found when something in it is redacted (gitleaks marks no span); a fresh one when
every character of its marked credentials is.

    PYTHONPATH=. python tests/benchmarks/scanner_recall.py [--missed]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from ragdesk.core.secrets import find_secrets
from tests.data.labelled import FRESH2_SECRETS, FRESH3_SECRETS, FRESH4_SECRETS, FRESH_SECRETS, SCANNERS, load


def recall() -> dict[str, tuple[int, int]]:
    """(found, all) of the dev and held-out parts."""
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in load(SCANNERS):
        total[r.lang] += 1
        found[r.lang] += bool(find_secrets(r.text))
    return {part: (found[part], total[part]) for part in ("dev", "held-out")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missed", action="store_true", help="list the dev records missed (never the held-out ones)")
    args = ap.parse_args()
    records = load(SCANNERS)
    per: dict[str, list[int]] = {}
    for r in records:
        row = per.setdefault(r.cls, [0, 0, 0, 0])
        hit = bool(find_secrets(r.text))
        row[0 if r.lang == "dev" else 2] += hit
        row[1 if r.lang == "dev" else 3] += 1
    print("| gitleaks rule file | dev | held-out |\n|---|---:|---:|")
    for cls, (d, dn, h, hn) in sorted(per.items()):
        print(f"| {cls} | {d}/{dn} | {h}/{hn} |")
    for part, (f, n) in recall().items():
        print(f"{part}: {f}/{n} = {f / n:.3f}")
    for corpus in (FRESH_SECRETS, FRESH2_SECRETS, FRESH3_SECRETS, FRESH4_SECRETS):
        _fresh_table(corpus)
    if args.missed:
        for r in records:
            if r.lang == "dev" and not find_secrets(r.text):
                print(f"MISSED [{r.cls}] {r.text[:140]!r}")


def _fresh_table(corpus: Path) -> None:
    """Per form, the dev and held-out records whose every marked character is redacted."""
    print(f"\n| form written before its rules ({corpus.name}) | dev | held-out |\n|---|---:|---:|")
    per_form: dict[str, list[int]] = {}
    totals = {"dev": [0, 0], "held-out": [0, 0]}
    for r in load(corpus):
        row = per_form.setdefault(r.cls, [0, 0, 0, 0])
        hit = r.covered_by([(s.start, s.end) for s in find_secrets(r.text)])
        row[0 if r.shape == "dev" else 2] += hit
        row[1 if r.shape == "dev" else 3] += 1
        totals[r.shape][0] += hit
        totals[r.shape][1] += 1
    for cls, (d, dn, h, hn) in per_form.items():
        print(f"| {cls} | {d}/{dn} | {h}/{hn} |")
    for part, (found, n) in totals.items():
        print(f"{corpus.stem} {part}: {found}/{n} = {found / n:.3f}")


if __name__ == "__main__":
    main()
