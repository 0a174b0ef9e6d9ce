"""Disguised instructions flagged on cases written apart from the rules (tests/data/injections/fresh.txt,
issue 59): per class, the development two thirds apart from the held-out third (never read while writing
patterns or fitting the probe; its figure is the promise), by the patterns, the probe and both; and the
share of ordinary chunks of ../shared/data each flags (the probe on `--chunks` chunks it was not fitted on).

    PYTHONPATH=. python tests/benchmarks/injection_recall.py [--chunks 5000] [--all-chunks]
"""

from __future__ import annotations

import argparse
import math
from collections import Counter

from ragdesk.core.dense import load_embedder
from ragdesk.core.injection import detect_injection
from ragdesk.core.injection_probe import InjectionProbe
from tests.benchmarks.train_injection_probe import FRESH, split_chunks
from tests.data import negatives
from tests.data.labelled import load


def upper95(k: int, n: int) -> float:
    """The one-sided 95% upper bound of a rate seen k times in n (Wilson; 3/n when k = 0)."""
    if k == 0:
        return 3 / n
    p, z = k / n, 1.645
    return (p + z * z / (2 * n) + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=5000, help="chunks the probe's flag rate is judged on")
    ap.add_argument("--all-chunks", action="store_true", help="the patterns' flag rate on every chunk (slow)")
    args = ap.parse_args()
    probe = InjectionProbe.for_embedder(load_embedder("e5"))
    assert probe is not None, "no probe fitted for the e5 model (run train_injection_probe.py)"
    records = load(FRESH)
    by_probe = probe.findings([r.text for r in records])
    rows: dict[str, Counter[str]] = {}
    for r, probed in zip(records, by_probe):
        patterns = r.hit_by([(f.start, f.end) for f in detect_injection(r.text)])
        meaning = r.hit_by([(f.start, f.end) for f in probed])
        row = rows.setdefault(r.cls, Counter())
        row[f"{r.shape} n"] += 1
        row[f"{r.shape} patterns"] += patterns
        row[f"{r.shape} probe"] += meaning
        row[f"{r.shape} both"] += patterns or meaning
    print("| class | dev: patterns, probe, both | held-out: patterns, probe, both |\n|---|---|---|")
    total: Counter[str] = Counter()
    for cls, row in rows.items():
        total.update(row)
        cells = [f"{row[p + ' patterns']}, {row[p + ' probe']}, {row[p + ' both']} of {row[p + ' n']}"
                 for p in ("dev", "held-out")]
        print(f"| {cls} | {cells[0]} | {cells[1]} |")
    for part in ("dev", "held-out"):
        n = total[f"{part} n"]
        print(f"{part}: patterns {total[part + ' patterns']}/{n}, probe {total[part + ' probe']}/{n}, "
              f"both {total[part + ' both']}/{n} = {total[part + ' both'] / n:.3f}")
    judged = split_chunks()[1][: args.chunks]
    by_meaning = [bool(f) for f in probe.findings(judged)]
    by_patterns = [bool(detect_injection(c)) for c in judged]
    flagged_probe, flagged_patterns = sum(by_meaning), sum(by_patterns)
    flagged_both = sum(m or p for m, p in zip(by_meaning, by_patterns))
    n = len(judged)
    print(f"ordinary chunks flagged ({n} the probe was not fitted on): patterns {flagged_patterns}, probe "
          f"{flagged_probe}, both {flagged_both} = {flagged_both / n:.4%} "
          f"(95% upper bound {upper95(flagged_both, n):.4%})")
    if args.all_chunks:
        every = negatives.cached_shared_chunks()
        k = sum(bool(detect_injection(t)) for _, _, t in every)
        print(f"patterns on every chunk: {k}/{len(every)} = {k / len(every):.4%}")


if __name__ == "__main__":
    main()
