"""Query latency of hybrid search beside BM25's, on a folder of any size, without hours of embedding.

Latency does not depend on what the vectors mean, so this builds FOLDER's index into a temporary
folder and stores random unit vectors (384-d, float16, like multilingual-e5-small's) as its meaning
index, then times the same queries (note titles: what a person types) in BM25 and hybrid mode, top 10
with every explanation, as `search --json` computes them: the query embedded by the real model, once
uncached (the first time a query is typed) and once cached (typing pauses re-run it).

    python tests/benchmarks/bench_hybrid.py [FOLDER] [--queries 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ragdesk.core import embeddings, store
from ragdesk.core.build import build_index
from ragdesk.core.dense import load_embedder
from ragdesk.core.params import SearchParams

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", nargs="?", default=str(DATA / "til-notes"))
    p.add_argument("--queries", type=int, default=200)
    args = p.parse_args()
    e5 = load_embedder("e5")
    with tempfile.TemporaryDirectory() as tmp:
        lib, _ = build_index(args.folder, tmp)
        rng = np.random.default_rng(0)
        for seg in lib.segments:  # random unit rows, stored where the meaning index lives
            rows = rng.standard_normal((seg.n_chunks, 384)).astype(np.float32)
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
            store.save_array(embeddings.stored_path(seg, e5.name), rows.astype(np.float16))
        titles = sorted({Path(path).stem.replace("-", " ").replace("_", " ") for path in lib.note_paths})
        queries = [t for t in titles if 2 <= len(t.split()) <= 6][: args.queries]
        params = SearchParams()
        lib.search(queries[0], params, mode="hybrid", embedder=e5)  # maps the vectors and the term indexes
        bm25 = [timed(lambda q=q: lib.search(q, params)) for q in queries]
        embed = [timed(lambda q=q: e5.embed_query(q)) for q in queries]  # uncached: the model runs
        hybrid = [timed(lambda q=q: lib.search(q, params, mode="hybrid", embedder=e5)) for q in queries]  # cached
    print(f"{args.folder}: {lib.n_chunks} chunks, {len(queries)} title queries, top 10 with explanations")

    def line(label: str, ms: list[float]) -> str:
        ms = sorted(ms)
        return f"  {label:44} p50 {statistics.median(ms):7.2f} ms   p95 {ms[int(len(ms) * 0.95)]:7.2f} ms"

    print(line("bm25", bm25))
    print(line("hybrid, query vector cached", hybrid))
    print(line("query embedding (multilingual-e5-small, 4-bit)", embed))
    both = [h + e for h, e in zip(hybrid, embed)]
    print(line("hybrid, query typed for the first time", both))
    return 0


if __name__ == "__main__":
    sys.exit(main())
