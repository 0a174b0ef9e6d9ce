"""Secret detectors compared on the labelled corpus (recall) and on every chunk of ../shared/data
(how many ordinary chunks each would flag), in one run.

    python tests/benchmarks/secret_detectors.py [--show 30] [--detectors ragdesk,detect-secrets,both]

A positive counts as caught when every character of each marked credential is redacted (a finding
that leaves half a key in the prompt is a miss). detect-secrets (Yelp, `pip install detect-secrets`)
runs its keyword and format plugins, its two entropy plugins off. The chunks of ../shared/data are
read once and kept in ~/.cache/ragdesk-bench/chunks.pickle (0600; tests/data/negatives.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from ragdesk.core.secrets import find_secrets

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.data import negatives  # noqa: E402
from tests.data.labelled import SECRETS, load  # noqa: E402

Spans = list[tuple[int, int]]


def ragdesk_spans(text: str) -> Spans:
    return [(s.start, s.end, s.kind) for s in find_secrets(text)]  # type: ignore[misc]


def detect_secrets_spans() -> Callable[[str], Spans]:
    """detect-secrets' plugins but its entropy ones, line by line; each value found located in its line."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    plugins = [
        {"name": c.__name__}
        for c in get_mapping_from_secret_type_to_class().values()
        if "HighEntropy" not in c.__name__ and c.__name__ != "IPPublicDetector"
    ]
    context = transient_settings({"plugins_used": plugins})
    context.__enter__()  # left open for the run: kept below, or its cleanup would undo the settings

    def spans(text: str) -> Spans:
        out: Spans = []
        at = 0
        for line in text.split("\n"):
            for found in scan_line(line):
                value = found.secret_value or ""
                i = line.find(value) if value else -1
                if i >= 0:
                    out.append((at + i, at + i + len(value)))
            at += len(line) + 1
        return out

    spans.context = context  # type: ignore[attr-defined]
    return spans


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=20, help="misses and flagged chunks to print per detector")
    parser.add_argument("--detectors", default="ragdesk,detect-secrets,both")
    args = parser.parse_args()
    detectors: dict[str, Callable[[str], Spans]] = {"ragdesk": ragdesk_spans}
    wanted = args.detectors.split(",")
    if "detect-secrets" in wanted or "both" in wanted:
        try:
            ds = detect_secrets_spans()
            detectors["detect-secrets"] = ds
            detectors["both"] = lambda t: ragdesk_spans(t) + ds(t)
        except ImportError:
            print("detect-secrets is not installed (pip install detect-secrets): left out", file=sys.stderr)
    detectors = {k: v for k, v in detectors.items() if k in wanted}
    records = load(SECRETS)
    chunks = negatives.cached_shared_chunks() if negatives.SHARED.is_dir() else []
    print(f"{len(records)} labelled records ({sum(len(r.spans) for r in records)} credentials); "
          f"{len(chunks)} chunks of ../shared/data as negatives\n")
    print("| detector | recall | caught | flagged chunks | flag rate | seconds |\n|---|---:|---:|---:|---:|---:|")
    details: dict[str, tuple[dict[str, list[int]], list[str], list[str]]] = {}
    for name, spans in detectors.items():
        t0 = time.perf_counter()
        per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        misses: list[str] = []
        for r in records:
            ok = r.covered_by([(s[0], s[1]) for s in spans(r.text)])
            per_class[r.cls][0] += ok
            per_class[r.cls][1] += 1
            if not ok:
                misses.append(f"[{r.cls}] {r.text[:150]!r}")
        flagged: list[str] = []
        by_corpus: Counter[str] = Counter()
        for path, _, text in chunks:
            found = spans(text)
            if found:
                by_corpus[path.split("/", 1)[0]] += 1
                s, e, *kind = found[0]
                flagged.append(f"{path}: {kind[0] if kind else ''} “{text[max(0, s - 40) : e + 10]!r}”")
        caught = sum(c for c, _ in per_class.values())
        n = len(chunks) or 1
        print(f"| {name} | {caught / len(records):.4f} | {caught}/{len(records)} | {len(flagged)} | "
              f"{len(flagged) / n:.4%} | {time.perf_counter() - t0:.0f} |")
        details[name] = (per_class, misses, flagged)
    for name, (per_class, misses, flagged) in details.items():
        print(f"\n### {name}: recall per class\n\n| class | caught |\n|---|---:|")
        for cls, (c, t) in per_class.items():
            print(f"| {cls} | {c}/{t} |")
        print(f"\nmisses ({len(misses)}):", *misses[: args.show], sep="\n  ", file=sys.stderr)
        print(f"flagged chunks ({len(flagged)}):", *flagged[: args.show], sep="\n  ", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
