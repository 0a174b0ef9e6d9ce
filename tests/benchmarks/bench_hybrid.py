"""Query latency of hybrid search beside BM25's, on a folder of any size, without hours of embedding.

Latency hardly depends on what the vectors mean, so this builds FOLDER's index into a temporary
folder and stores stand-in vectors (384-d, float16, like multilingual-e5-small's) as its meaning
index, then times the same queries (note titles: what a person types) in BM25 and hybrid mode, top 10
with every explanation, as `search --json` computes them: the query embedded by the real model, once
uncached (the first time a query is typed), then searched with its vector cached (typing pauses
re-run it), then again (its notes' lengths for the note share kept from the first run too).

The stand-ins are random unit vectors, or with --vectors rows drawn from a real meaning index (any
folder's dense-e5-small-q4.npy) plus a little noise: how many rows the exact dense top k scores
(core.nearest) depends on how e5's vectors crowd together, which random ones do not show. The dense
top k is also timed alone beside the float32 matrix product it replaced.

With --index-dir, FOLDER's own index there and its own meaning index are timed instead (complete,
or unfinished: hybrid then ranks the chunks embedded so far, as the window does while it is computed).

    python tests/benchmarks/bench_hybrid.py [FOLDER] [--queries 200] [--vectors DENSE.npy | --index-dir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragdesk.core import embeddings, fileio
from ragdesk.core.build import build_index
from ragdesk.core.dense import load_embedder
from ragdesk.core.fusion import FUSION_DEPTH
from ragdesk.core.meaning_writer import meaning_matrix
from ragdesk.core.params import SearchParams
from ragdesk.core.reader import IndexReader

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", nargs="?", default=str(DATA / "til-notes"))
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--vectors", help="a real meaning index's .npy to draw the stand-in rows from")
    p.add_argument("--index-dir", help="time FOLDER's own index and meaning index stored there")
    args = p.parse_args()
    real = np.load(args.vectors, mmap_mode="r") if args.vectors else None
    e5 = load_embedder("e5")
    with contextlib.ExitStack() as stack:
        if args.index_dir:
            lib = IndexReader.open(args.folder, args.index_dir)
        else:
            lib, _ = build_index(args.folder, stack.enter_context(tempfile.TemporaryDirectory()))
            stand_in(lib, e5.name, real)
        done, total = lib.meaning_progress(e5.name)
        complete = lib.has_meaning(e5.name)
        hyb: dict[str, Any] = {"mode": "hybrid", "embedder": e5, "partial": True}
        titles = sorted({Path(path).stem.replace("-", " ").replace("_", " ") for path in lib.note_paths})
        queries = [t for t in titles if 2 <= len(t.split()) <= 6][: args.queries]
        params = SearchParams()
        first_bm25 = timed(lambda: lib.search(queries[0], params))  # maps (derives) the term indexes
        first = timed(lambda: lib.search(queries[0], params, **hyb))  # maps and quantizes
        for q in queries:  # warm: each term's postings paged in and its range bounds computed once
            lib.search(q, params)
        bm25 = [timed(lambda q=q: lib.search(q, params)) for q in queries]
        embed = [timed(lambda q=q: e5.embed_query(q)) for q in queries]  # uncached: the model runs
        hybrid = [timed(lambda q=q: lib.search(q, params, **hyb)) for q in queries]  # vector cached
        again = [timed(lambda q=q: lib.search(q, params, **hyb)) for q in queries]  # its notes' lengths too
        index = lib.nearest(e5.name, partial=True)
        vectors = [e5.embed_query(q) for q in queries]
        top_k = [timed(lambda v=v: index.top_k(v, FUSION_DEPTH)) for v in vectors]
        scored = [sum(len(p.candidates(v, FUSION_DEPTH)) for p in index.parts) for v in vectors]
        product: list[float] = []
        if complete:
            as_float32 = np.asarray(meaning_matrix(lib, e5), np.float32)
            product = [timed(lambda v=v: dense_product_top_k(as_float32, v, FUSION_DEPTH)) for v in vectors]
            float32_mb = as_float32.nbytes / 2**20
    if args.index_dir:
        source = f"its own ({done:,} of {total:,} chunks embedded)"
    else:
        source = f"stand-in, rows drawn from {args.vectors}" if real is not None else "stand-in, random unit vectors"
    print(f"{args.folder}: {lib.n_chunks} chunks, {len(queries)} title queries, top 10 with explanations")
    print(f"  meaning index: {source}")
    print(f"  first BM25 search (term indexes) {first_bm25:.0f} ms, then first hybrid (quantizing) {first:.0f} ms")

    def line(label: str, ms: list[float]) -> str:
        ms = sorted(ms)
        return f"  {label:44} p50 {statistics.median(ms):7.2f} ms   p95 {ms[int(len(ms) * 0.95)]:7.2f} ms"

    print(line("bm25", bm25))
    print(line("hybrid, query vector cached", hybrid))
    print(line("hybrid, the same query again", again))
    print(line("query embedding (multilingual-e5-small, 4-bit)", embed))
    both = [h + e for h, e in zip(hybrid, embed)]
    print(line("hybrid, query typed for the first time", both))
    print(line(f"dense top {FUSION_DEPTH}, exact over int8 codes", top_k))
    print(
        f"    rows scored exactly: median {statistics.median(scored):.0f} of {lib.n_chunks}; "
        f"codes {index.nbytes / 2**20:.0f} MB in memory"
    )
    if product:
        print(line(f"dense top {FUSION_DEPTH}, float32 matrix product", product))
        print(f"    float32 copy {float32_mb:.0f} MB in memory")
    return 0


def stand_in(lib: IndexReader, name: str, real: np.ndarray | None) -> None:
    """Store unit rows as each segment's meaning index: random, or drawn from `real` plus noise."""
    rng = np.random.default_rng(0)
    for seg in lib.segments:
        if real is None:
            rows = rng.standard_normal((seg.n_chunks, 384)).astype(np.float32)
        else:
            rows = real[rng.integers(len(real), size=seg.n_chunks)].astype(np.float32)
            rows += rng.standard_normal(rows.shape).astype(np.float32) * 0.01
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        fileio.save_array(embeddings.stored_path(seg, name), rows.astype(np.float16))


def dense_product_top_k(matrix: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    """What the dense top k was before core.nearest: one BLAS product over a float32 copy."""
    sims = matrix @ query
    return np.argpartition(-sims, k - 1)[:k]


if __name__ == "__main__":
    sys.exit(main())
