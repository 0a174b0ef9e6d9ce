"""ragdesk against tantivy on query time alone, in one process, in alternating rounds.

bench_engines.py times each engine in its own process, minutes apart; on a machine whose speed
drifts (this one: the same queries 1.6-3.2 ms p50 in runs minutes apart) the ratio between
engines drifts with it. Here both indexes are built first, then the same queries run in rounds
that alternate between the engines, so both see the same machine. Each query's time is the best
of its rounds; the table shows p50/p95 of those, and the ratio.

    python tests/benchmarks/bench_query_ab.py [--corpus til|scale] [--rounds 5]

Needs the bench extra (tantivy): pip install -e ".[bench]".
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_engines import CORPORA, N_CLAIMS, WORD, percentile, queries, windows


def best_times(engines: dict[str, Callable[[str], object]], qs: list[str], rounds: int) -> dict[str, list[float]]:
    """Per engine, each query's fastest time (ms) over `rounds` rounds that alternate engines."""
    best = {name: [float("inf")] * len(qs) for name in engines}
    for fn in engines.values():  # warm up
        for q in qs[:5]:
            fn(q)
    names = list(engines)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:  # who goes first alternates too
            fn, times = engines[name], best[name]
            for i, q in enumerate(qs):
                t0 = time.perf_counter()
                fn(q)
                times[i] = min(times[i], (time.perf_counter() - t0) * 1000)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", choices=tuple(CORPORA), default="scale")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    folder, exts = CORPORA[args.corpus]
    if not folder.is_dir():
        print(f"needs {folder}", file=sys.stderr)
        return 2
    import tantivy

    from ragdesk.core.analyzers import AnalyzerConfig
    from ragdesk.core.index import ranking_kernel
    from ragdesk.core.library import IndexSettings, build_index
    from ragdesk.core.loader import LoadOptions

    qs = queries()
    tmp = Path(tempfile.mkdtemp(prefix="ragdesk-ab-"))
    try:
        lib, _ = build_index(folder, tmp / "ragdesk", IndexSettings(LoadOptions(extensions=exts)))
        config = AnalyzerConfig()
        lib.warm(config)
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("body", stored=False)
        (tmp / "tantivy").mkdir()
        index = tantivy.Index(sb.build(), path=str(tmp / "tantivy"))
        writer = index.writer(heap_size=200_000_000, num_threads=1)
        for text in windows(folder, exts):
            writer.add_document(tantivy.Document(body=text))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        searcher = index.searcher()

        def tantivy_query(q: str, explain: bool) -> object:
            words = WORD.findall(q)
            if not words:
                return None
            parsed = index.parse_query(" ".join(words), ["body"])
            hits = searcher.search(parsed, 10).hits
            return [parsed.explain(searcher, addr).to_json() for _, addr in hits] if explain else hits

        engines: dict[str, Callable[[str], object]] = {
            "ragdesk (combined)": lambda q: lib.search(q, config, k=10, explain=False),
            "ragdesk (combined), explained": lambda q: lib.search(q, config, k=10, explain=True),
            "tantivy": lambda q: tantivy_query(q, False),
            "tantivy, explained": lambda q: tantivy_query(q, True),
        }
        best = best_times(engines, qs, args.rounds)
        n_chunks = lib.n_chunks
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"{args.corpus}: {n_chunks} ragdesk chunks; {len(qs)} queries, best of {args.rounds} alternating rounds; "
        f"ragdesk ranking: {ranking_kernel()}\n"
    )
    print("| engine | p50 ms | p95 ms | claims p50 ms | titles p50 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, ts in best.items():
        print(
            f"| {name} | {statistics.median(ts):.2f} | {percentile(ts, 95):.2f} "
            f"| {statistics.median(ts[:N_CLAIMS]):.2f} | {statistics.median(ts[N_CLAIMS:]):.2f} |"
        )
    p50 = {name: statistics.median(ts) for name, ts in best.items()}
    print(
        f"\nratio ragdesk / tantivy, p50: {p50['ragdesk (combined)'] / p50['tantivy']:.2f}x; "
        f"with explanations: {p50['ragdesk (combined), explained'] / p50['tantivy, explained']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
