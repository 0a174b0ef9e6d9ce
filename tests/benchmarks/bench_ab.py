"""ragdesk against tantivy, build and query time, in one process, in alternating rounds.

bench_engines.py times each engine in its own process, minutes apart; on a machine whose speed
drifts (this one: the same queries 1.6-3.2 ms p50 in runs minutes apart) the ratio between
engines drifts with it. Here the engines take turns: full builds first (ragdesk, tantivy,
ragdesk, ... each from scratch; ragdesk's includes deriving the default analyzer's indexes,
tantivy's includes cutting the notes into windows; "tantivy, whole files" indexes each file as one
document, the floor), then the same queries in alternating rounds. Each query's time is the best
of its rounds; builds report their fastest and median. Short queries (the note titles: what a
person types) and long ones (the SciFact claims) are reported apart.

    python tests/benchmarks/bench_ab.py [--corpus til|scale] [--rounds 5] [--builds 3]

Needs the bench extra (tantivy): pip install -e ".[bench]".
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_engines import (
    CORPORA,
    N_CLAIMS,
    TANTIVY_HEAP,
    percentile,
    queries,
    tantivy_index,
    tantivy_query,
    whole_files,
    windows,
)


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
    ap.add_argument("--builds", type=int, default=3)
    args = ap.parse_args()
    folder, exts = CORPORA[args.corpus]
    if not folder.is_dir():
        print(f"needs {folder}", file=sys.stderr)
        return 2
    from ragdesk.core.analyzers import AnalyzerConfig
    from ragdesk.core.build import build_index
    from ragdesk.core.kernels import ranking_name
    from ragdesk.core.loader import LoadOptions
    from ragdesk.core.params import IndexSettings

    qs = queries()
    config = AnalyzerConfig()
    every_word = dataclasses.replace(config, query_language="off")  # no language detected, no word left out
    tmp = Path(tempfile.mkdtemp(prefix="ragdesk-ab-"))

    def build_ragdesk(where: Path) -> Any:
        lib, _ = build_index(folder, where, IndexSettings(LoadOptions(extensions=exts)), warm=config)
        return lib

    def build_tantivy(where: Path) -> Any:
        where.mkdir()
        return tantivy_index(windows(folder, exts), str(where))

    def build_tantivy_files(where: Path) -> Any:  # the floor: no windows to cut, one document per file
        where.mkdir()
        return tantivy_index(whole_files(folder, exts), str(where))

    builders = {"ragdesk": build_ragdesk, "tantivy": build_tantivy, "tantivy, whole files": build_tantivy_files}
    build_s: dict[str, list[float]] = {name: [] for name in builders}
    built: dict[str, Any] = {}
    try:
        for r in range(max(args.builds, 1)):
            for name in list(builders)[r % 3 :] + list(builders)[: r % 3]:  # who goes first rotates
                t0 = time.perf_counter()
                built[name] = builders[name](tmp / f"{name}-{r}")
                build_s[name].append(time.perf_counter() - t0)
        lib, index, files_index = built["ragdesk"], built["tantivy"], built["tantivy, whole files"]
        searcher, files_searcher = index.searcher(), files_index.searcher()

        engines: dict[str, Callable[[str], object]] = {
            "ragdesk (combined)": lambda q: lib.search(q, analyzer=config, k=10, explain=False),
            "ragdesk (combined), explained": lambda q: lib.search(q, analyzer=config, k=10, explain=True),
            "ragdesk (combined), query language off": lambda q: lib.search(q, analyzer=every_word, k=10, explain=False),
            "tantivy": lambda q: tantivy_query(index, searcher, q),
            "tantivy, explained": lambda q: tantivy_query(index, searcher, q, explain=True),
            "tantivy, whole files": lambda q: tantivy_query(files_index, files_searcher, q),
        }
        best = best_times(engines, qs, args.rounds)
        n_chunks = lib.n_chunks
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"{args.corpus}: {n_chunks} ragdesk chunks; {len(qs)} queries, best of {args.rounds} alternating rounds; "
        f"ragdesk ranking: {ranking_name()}\n"
    )
    print("| engine | full build s, fastest (median) |\n|---|---:|")
    for name, ts in build_s.items():
        print(f"| {name} | {min(ts):.1f} ({statistics.median(ts):.1f}) |")
    print(
        f"\nratio ragdesk / tantivy (same windows, {TANTIVY_HEAP // 10**6} MB writer heap), fastest build: "
        f"{min(build_s['ragdesk']) / min(build_s['tantivy']):.2f}x\n"
    )
    print("| engine | short queries p50 ms | long queries p50 ms | all p50 ms | all p95 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, ts in best.items():
        print(
            f"| {name} | {statistics.median(ts[N_CLAIMS:]):.2f} | {statistics.median(ts[:N_CLAIMS]):.2f} "
            f"| {statistics.median(ts):.2f} | {percentile(ts, 95):.2f} |"
        )
    print()
    for label, part in (
        ("short queries (titles, what a person types)", slice(N_CLAIMS, None)),
        ("long queries (SciFact claims)", slice(0, N_CLAIMS)),
        ("all", slice(None)),
    ):
        p50 = {name: statistics.median(ts[part]) for name, ts in best.items()}
        print(
            f"ratio ragdesk / tantivy, {label}, p50: {p50['ragdesk (combined)'] / p50['tantivy']:.2f}x; "
            f"with explanations: {p50['ragdesk (combined), explained'] / p50['tantivy, explained']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
