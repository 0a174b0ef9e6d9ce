"""Long use of the e5 engine: does throughput or memory drift over thousands of chunks?

Embeds N chunks drawn at random from FOLDER's stored index (build it first: `ragdesk index FOLDER
--index-dir DIR --no-dense`) in one process, as `ragdesk index` does (side by side over one heap,
or `--spread`: each text over every core), and prints chunks/s and resident memory per window of
500. A drift shows as falling rates or growing memory late in the run; compare a run's last windows
with a fresh run's first on the same chunks (`--skip`).

    python tests/benchmarks/bench_embed_long.py FOLDER --index-dir DIR [--chunks 20000] [--skip 0] [--spread]
"""

from __future__ import annotations

import argparse
import sys
import time


def resident_mb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 >> 20


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--index-dir", required=True)
    p.add_argument("--chunks", type=int, default=20_000)
    p.add_argument("--skip", type=int, default=0, help="start this far into the random order")
    p.add_argument("--spread", action="store_true", help="each text over every core (the window's way)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if not args.spread:
        from ragdesk.core.heap import share_one_heap

        share_one_heap()  # before any thread, as the CLI and the build process do
    import numpy as np

    from ragdesk.core.e5_onnx import OnnxE5
    from ragdesk.core.reader import IndexReader

    lib = IndexReader.open(args.folder, args.index_dir)
    order = np.random.default_rng(args.seed).permutation(lib.n_chunks)
    ids = order[args.skip : args.skip + args.chunks].tolist()
    engine = OnnxE5(side_by_side=not args.spread)
    t0 = time.perf_counter()
    for i in range(0, len(ids), 500):
        texts = lib.chunk_texts(ids[i : i + 500])
        t = time.perf_counter()
        engine.passage(texts)
        rate = len(texts) / (time.perf_counter() - t)
        print(f"{i + len(texts):7d} chunks  {rate:5.1f}/s  {resident_mb()} MB resident", flush=True)
    print(f"all: {len(ids) / (time.perf_counter() - t0):.1f} chunks/s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
