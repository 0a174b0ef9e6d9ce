"""What checking a meaning index's rows before ranking costs (issue 52): the per-block CRCs and the
NaN check over 180,842 rows of 384 dimensions (the scale corpus), read from the page cache once per
process, beside one exact dense top-10 over the same rows (the search it protects).

    python tests/benchmarks/row_checks.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ragdesk.core import fileio, row_sums
from ragdesk.core.nearest import NearestRows, SegmentedNearest

ROWS, DIM = 180_842, 384


def main() -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dense.npy"
        rows = rng.normal(size=(ROWS, DIM)).astype(np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        fileio.save_array(path, rows.astype(np.float16))
        del rows
        stored = np.load(path, mmap_mode="r")
        t = time.perf_counter()
        recorded = {"block_rows": row_sums.BLOCK_ROWS, "blocks": row_sums.block_sums(stored)}
        record_s = time.perf_counter() - t
        checks = []
        for _ in range(5):
            t = time.perf_counter()
            assert row_sums.damaged_blocks(stored, recorded) == []
            checks.append(time.perf_counter() - t)
        nearest = SegmentedNearest([NearestRows(stored)], [np.arange(ROWS)])
        queries = rng.normal(size=(50, DIM)).astype(np.float32)
        t = time.perf_counter()
        nearest.top_k(queries[0], 10)  # quantized once, as a reader does on first use
        first_s = time.perf_counter() - t
        times = []
        for q in queries:
            t = time.perf_counter()
            nearest.top_k(q / np.linalg.norm(q), 10)
            times.append(time.perf_counter() - t)
    print(f"rows {ROWS:,} x {DIM}, {path.name} {ROWS * DIM * 2 / 1e6:.0f} MB, blocks of {row_sums.BLOCK_ROWS} rows")
    print(f"record the block CRCs (once, when complete): {record_s * 1e3:.1f} ms")
    print(f"check before ranking (once per process and file): median {statistics.median(checks) * 1e3:.1f} ms")
    print(f"first dense search (quantizes the rows, once per process): {first_s * 1e3:.1f} ms")
    print(f"dense top-10 over the same rows: p50 {statistics.median(times) * 1e3:.2f} ms per query (no check)")


if __name__ == "__main__":
    main()
