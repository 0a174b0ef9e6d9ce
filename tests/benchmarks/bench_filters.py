"""What a query's filters, phrases and exclusions cost (docs/query.md), beside the same query without.

Builds FOLDER's index (default: the scale corpus, every note of ../shared/data) into a temporary
folder with stand-in meaning vectors (bench_hybrid.stand_in), then times note-title queries (what a
person types), top 10 with every explanation, in BM25 and hybrid: plain, with a broad and a narrow
folder filter, with a type filter, with a phrase and with an exclusion. A filter's mask is kept per
index once computed (the first query with it pays for it, shown apart as "first"); a phrase or
exclusion is new with each query, so its "first" is what typing it costs, and "again" what a re-search
(Show more, another mode) costs.

    python tests/benchmarks/bench_filters.py [FOLDER] [--queries 200] [--vectors DENSE.npy]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from bench_hybrid import DATA, stand_in, timed

from ragdesk.core.build import build_index
from ragdesk.core.dense import load_embedder
from ragdesk.core.loader import LoadOptions
from ragdesk.core.params import IndexSettings, SearchParams
from ragdesk.core.query import parse


def folders(paths: list[str], n_chunks: dict[str, int], total: int) -> tuple[str, str]:
    """The folder (any depth) holding the most chunks, and one holding about 1% of them."""
    per: collections.Counter[str] = collections.Counter()
    for p in paths:
        for part in set(p.split("/")[:-1]):
            per[part] += n_chunks[p]
    broad = per.most_common(1)[0][0]
    narrow = min(per, key=lambda f: abs(per[f] - total / 100))
    return broad, narrow


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", nargs="?", default=str(DATA))
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--vectors", help="a real meaning index's .npy to draw the stand-in rows from")
    args = p.parse_args()
    real = np.load(args.vectors, mmap_mode="r") if args.vectors else None
    e5 = load_embedder("e5")
    with contextlib.ExitStack() as stack:
        settings = IndexSettings(LoadOptions(extensions=(".md", ".texy")))
        lib, _ = build_index(args.folder, stack.enter_context(tempfile.TemporaryDirectory()), settings)
        stand_in(lib, e5.name, real)
        chunks_of = {path: len(lib.chunks_of_note(i)) for i, path in enumerate(lib.note_paths)}
        broad, narrow = folders(lib.note_paths, chunks_of, lib.n_chunks)
        titles = sorted({Path(path).stem.replace("-", " ").replace("_", " ") for path in lib.note_paths})
        queries = [t for t in titles if 2 <= len(t.split()) <= 6 and t.isascii()][: args.queries]
        params = SearchParams()
        hyb: dict[str, Any] = {"mode": "hybrid", "embedder": e5, "partial": True}
        for q in queries:  # warm: postings paged in, range bounds computed, quantized
            lib.search(q, params)
            lib.search(q, params, **hyb)
        share = {
            f"path:{broad}": sum(n for path, n in chunks_of.items() if broad in path.split("/")[:-1]),
            f"path:{narrow}": sum(n for path, n in chunks_of.items() if narrow in path.split("/")[:-1]),
            "-ext:texy": sum(n for path, n in chunks_of.items() if not path.endswith(".texy")),
        }
        variants: dict[str, Any] = {
            "plain": lambda q: q,
            **{f"with {f}": (lambda q, f=f: f"{q} {f}") for f in share},
            "with a phrase (its first two words)": lambda q: f'{q} "{" ".join(q.split()[:2])}"',
            "with an exclusion (-the)": lambda q: f"{q} -the",
        }
        embed = e5.embed_query
        vectors = {parse(make(q)).text: embed(parse(make(q)).text) for make in variants.values() for q in queries}
        e5.embed_query = vectors.__getitem__  # type: ignore[method-assign]  # cached, as typing pauses have it
        word = queries[1].split()[0]
        once = {  # what a filter's first use in an index computes for every note, kept after
            "path: (every note's folders)": timed(lambda: lib.search(f"{queries[0]} path:{narrow}", params)),
            "title: (every note's title)": timed(lambda: lib.search(f"{queries[0]} title:{word}", params)),
            "after: (every note's date)": timed(lambda: lib.search(f"{queries[0]} after:2025", params)),
            "tag: (every note's text read for #tags)": timed(lambda: lib.search(f"{queries[0]} tag:todo", params)),
        }
        rows = []
        for label, make in variants.items():
            for mode, extra in (("bm25", {"mode": "bm25"}), ("hybrid", hyb)):
                first, again = [], []
                for q in queries:  # bm25 computes a query's mask; hybrid then finds it kept
                    first.append(timed(lambda q=q, m=make, x=extra: lib.search(m(q), params, **x)))
                    again.append(timed(lambda q=q, m=make, x=extra: lib.search(m(q), params, **x)))
                rows.append((label, mode, first, again))
    print(f"{args.folder}: {lib.n_chunks:,} chunks, {len(queries)} title queries, top 10 with explanations")
    for f, n in share.items():
        print(f"  {f} keeps {n:,} chunks ({n / lib.n_chunks:.1%})")
    print("\nfirst use in this index (once): " + "; ".join(f"{k} {v:.0f} ms" for k, v in once.items()))
    print("\n| query | mode | first p50 ms | first p95 ms | again p50 ms | again p95 ms |")
    print("|---|---|---:|---:|---:|---:|")
    for label, mode, first, again in rows:
        f, a = sorted(first), sorted(again)
        print(
            f"| {label} | {mode} | {statistics.median(f):.2f} | {f[int(len(f) * 0.95)]:.2f} "
            f"| {statistics.median(a):.2f} | {a[int(len(a) * 0.95)]:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
