"""Exact top k by cosine over a meaning index, without a float32 copy of it.

Chunk vectors are stored float16 (see embeddings.py); numpy multiplies float16 without BLAS, so
searching them meant a float32 copy: 276 MB and ~15 ms per query for the scale corpus's 180,000
chunks. Here each row is quantized once to int8 (a quarter of that memory) and the query to int16;
one integer pass (compiled, without the GIL; numpy twin) keeps the rows whose quantized score is
within the quantization's worst-case error of the k-th best, and only those are scored exactly.
The result is the exhaustive ranking's, ids and cosines (tested equal), not an approximation.
"""

from __future__ import annotations

import numpy as np

from . import kernels

CODE_LEVELS = 127  # int8 codes: x ~ step_j * code, |error| <= step_j / 2
BLOCK_ROWS = 16384  # rows converted at a time while quantizing: bounded temporary memory
SLACK = 1e-6  # relative headroom on the error bound, for float rounding in computing it


def _compiled_for(rows: np.ndarray) -> bool:
    """Whether the C kernel takes these rows (float16, one contiguous block); else the numpy twin."""
    return kernels.RANKING is not None and rows.dtype == np.float16 and rows.flags.c_contiguous


def exact_cosines(rows: np.ndarray, query: np.ndarray, ids: np.ndarray | None = None) -> np.ndarray:
    """Rows `ids` (all by default) dot `query` in float64 in a fixed order, so a row gets the same
    float whichever rows it is scored with (float16 x float32 products are exact): four running sums
    (dimension j into sum j % 4), then (s0 + s1) + (s2 + s3). Compiled for float16 rows
    (`_kernel.near_cosines`), else numpy's running sums over the four lanes: the same floats."""
    ids = np.arange(len(rows), dtype=np.int64) if ids is None else np.asarray(ids, np.int64)
    q = np.asarray(query, np.float64)
    if _compiled_for(rows) and len(q):
        return np.frombuffer(kernels.RANKING.near_cosines(rows, q, ids), np.float64)
    products = np.asarray(rows[ids], np.float64) * q
    if not products.shape[1]:
        return np.zeros(len(ids))
    padded = np.zeros((len(ids), -(-products.shape[1] // 4) * 4))  # + 0.0 leaves a sum as it is
    padded[:, : products.shape[1]] = products
    lanes = np.cumsum(padded.reshape(len(ids), -1, 4), axis=1)[:, -1]
    return (lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])


def best_first(ids: np.ndarray, cosines: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best of (ids, cosines): higher cosine first, ties by lower id."""
    order = np.lexsort((ids, -cosines))[:k]
    return ids[order].astype(np.int64), cosines[order]


def exhaustive_top_k(rows: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference: every row scored exactly."""
    return best_first(np.arange(len(rows)), exact_cosines(rows, query), max(k, 0))


class NearestRows:
    """A meaning index's rows (float16, usually memory-mapped) with their int8 codes, for exact top k.
    `written`: of an unfinished meaning index, which rows hold an embedding (the others are zeros and
    are never returned)."""

    def __init__(self, rows: np.ndarray, written: np.ndarray | None = None) -> None:
        self.rows = rows
        self.written = None if written is None or written.all() else np.asarray(written, bool)
        n, dim = rows.shape
        if self.written is not None and not self.written.any():  # nothing to quantize or return
            self.codes, self.step, self.widest, self.residual = np.zeros((n, 0), np.int8), np.zeros(0), 0, 0.0
        elif _compiled_for(rows) and n and dim:
            codes, step, self.widest, self.residual = kernels.RANKING.near_quantize(rows, dim, CODE_LEVELS)
            self.codes = np.frombuffer(codes, np.int8).reshape(n, dim)
            self.step = np.frombuffer(step, np.float64)
        else:
            self.codes, self.step, self.widest, self.residual = quantize(rows)
        # int16 query levels such that a row's integer score fits int32 (d = 384: the full int16 range)
        self.query_levels = int(min(32767, (2**31 - 1) // (CODE_LEVELS * max(dim, 1))))

    def top_k(self, query: np.ndarray, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosines) of the k rows nearest `query` (among those `mask` keeps: a query's filters),
        best first, ties by id: exactly the exhaustive ranking's."""
        keep = self.written if mask is None else (mask if self.written is None else mask & self.written)
        k = min(k, len(self.rows) if keep is None else int(np.count_nonzero(keep)))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        ids = self.candidates(query, k, mask)
        if self.written is not None and not self.written[ids].all():
            # an empty row came within reach of the k-th best: the bound was set among every row, so
            # score the written ones exactly (with e5's cosines, all well above 0, this is rare)
            ids = np.flatnonzero(keep)
        return best_first(ids, exact_cosines(self.rows, query, ids), k)

    def candidates(self, query: np.ndarray, k: int, mask: np.ndarray | None = None) -> np.ndarray:
        """Ascending ids of the rows (of those `mask` keeps) that can be among the k nearest `query`
        (all of them when the query leaves nothing to prune by)."""
        n = len(self.rows)
        q = np.asarray(query, np.float64)
        weights = q * self.step
        largest = float(np.abs(weights).max(initial=0.0))
        if k >= n or largest == 0.0 or self.query_levels < 1:
            return np.arange(n, dtype=np.int64) if mask is None else np.flatnonzero(mask).astype(np.int64)
        unit = largest / self.query_levels
        levels = np.rint(weights / unit).astype(np.int16)
        # |cosine - unit * integer score| <= the query's rounding (unit/2 per |code|) + the row's:
        # sum |q_j| * step_j / 2, or by Cauchy-Schwarz |q| * |row - step * code|, whichever is less
        rows_error = min(float(np.abs(weights).sum()) / 2, float(np.linalg.norm(q)) * self.residual)
        error = (unit / 2 * self.widest + rows_error) * (1 + SLACK)
        margin = int(np.ceil(2 * error / unit)) + 1
        return integer_candidates(self.codes, levels, k, margin, mask)


def quantize(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, float]:
    """`_kernel.near_quantize`'s numpy twin: (int8 codes, step per dimension, the largest sum of |code|
    over a row, the largest |row - step * code|), in blocks of rows (bounded temporary memory)."""
    n, dim = rows.shape
    maxabs = np.zeros(dim, np.float64)
    for s in range(0, n, BLOCK_ROWS):
        maxabs = np.maximum(maxabs, np.abs(np.asarray(rows[s : s + BLOCK_ROWS], np.float64)).max(axis=0))
    step = maxabs / CODE_LEVELS
    inverse = np.divide(1.0, step, out=np.zeros(dim), where=step > 0)
    codes = np.empty((n, dim), np.int8)
    widest, residual = 0, 0.0
    for s in range(0, n, BLOCK_ROWS):
        exact = np.asarray(rows[s : s + BLOCK_ROWS], np.float64)
        block = np.clip(np.rint(exact * inverse), -CODE_LEVELS, CODE_LEVELS)
        codes[s : s + BLOCK_ROWS] = block
        widest = max(widest, int(np.abs(block).sum(axis=1).max(initial=0)))
        residual = max(residual, float(np.linalg.norm(exact - block * step, axis=1).max(initial=0.0)))
    return codes, step, widest, residual


class SegmentedNearest:
    """Exact top k over the segments of an index (a base and a delta), in the reader's numbering:
    each segment's own top k, widened by its chunks a refresh replaced, then merged. Exact because
    a row's cosine is the same float in any segment and each segment keeps its chunks' order."""

    def __init__(
        self, parts: list[NearestRows], remaps: tuple[np.ndarray, ...], written: np.ndarray | None = None
    ) -> None:
        self.parts = parts
        self.remaps = [np.asarray(r) for r in remaps]
        self.gone = [int(np.count_nonzero(r < 0)) for r in self.remaps]  # replaced chunks per segment
        self.written = written  # of an unfinished meaning index, by merged chunk id; None: every chunk
        self._located: tuple[np.ndarray, np.ndarray] | None = None
        self._norms: dict[tuple[int, int], float] = {}  # see _sum_norms

    def top_k(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(merged ids, cosines) of the k chunks nearest `query`, best first, ties by id."""
        ids, cosines = [], []
        for part, remap, gone in zip(self.parts, self.remaps, self.gone):
            local, cos = part.top_k(query, k + gone)
            merged = remap[local]
            ids.append(merged[merged >= 0])
            cosines.append(cos[merged >= 0])
        return best_first(np.concatenate(ids), np.concatenate(cosines), k)

    def top_k_within(self, query: np.ndarray, k: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`top_k` among the chunks `mask` keeps (a query's filters, by merged id), exactly: each
        segment's own masked top k (its replaced chunks kept out), then merged."""
        ids, cosines = [], []
        for part, remap in zip(self.parts, self.remaps):
            kept = remap >= 0
            local = np.zeros(len(remap), dtype=bool)
            local[kept] = mask[remap[kept]]
            found, cos = part.top_k(query, k, local)
            ids.append(remap[found])
            cosines.append(cos)
        return best_first(np.concatenate(ids), np.concatenate(cosines), k)

    def summed_cosines(self, query: np.ndarray, ranges: list[tuple[int, int]]) -> list[float | None]:
        """Per range [first, end) of merged chunk ids (a note's chunks): the cosine of their summed
        vectors with `query` (chunks not embedded yet add nothing; None when none is). The sum's dot
        with the query is the sum of its rows' exact cosines (compiled); its length does not depend on
        the query, so a complete index computes it once per note (`_sum_norms`)."""
        ids = np.concatenate([np.arange(first, end) for first, end in ranges] or [np.zeros(0, np.int64)])
        dots = np.zeros(len(ids))
        for part, mine, local in self._by_segment(ids):
            if len(local) and part.rows.shape[1]:  # an unfinished part with nothing written has no columns
                dots[mine] = exact_cosines(part.rows, query, local)
        lengths = np.array([end - first for first, end in ranges], np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        sums = np.add.reduceat(dots, starts[lengths > 0]) if len(ids) else np.zeros(0)
        numerators = np.zeros(len(ranges))
        numerators[lengths > 0] = sums
        norms = self._sum_norms(ranges)
        return [float(c / n) if n > 0 else None for c, n in zip(numerators.tolist(), norms)]

    def _sum_norms(self, ranges: list[tuple[int, int]]) -> list[float]:
        """The length of each range's summed vector (float64 sums), kept per range once the meaning
        index is complete: its rows no longer change."""
        missing = [r for r in ranges if r not in self._norms]
        if missing:
            ids = np.concatenate([np.arange(first, end) for first, end in missing])
            dim = max((p.rows.shape[1] for p in self.parts), default=0)
            gathered = np.zeros((len(ids), dim), np.float32)
            for part, mine, local in self._by_segment(ids):
                if len(local) and part.rows.shape[1]:
                    gathered[mine] = part.rows[local]
            bounds = np.cumsum([0] + [end - first for first, end in missing]).tolist()
            found = {
                r: float(np.linalg.norm(gathered[a:b].sum(axis=0, dtype=np.float64)))
                for r, a, b in zip(missing, bounds, bounds[1:])
            }
            if any(p.written is not None for p in self.parts):  # unfinished: rows are still being written
                return [found[r] for r in ranges]
            self._norms.update(found)
        return [self._norms[r] for r in ranges]

    def _by_segment(self, ids: np.ndarray) -> list[tuple[NearestRows, np.ndarray, np.ndarray]]:
        """For each segment: (its rows, which of merged `ids` are in it, their ids there)."""
        segment, local = self._where()
        at = segment[ids]
        return [(part, at == s, local[ids[at == s]]) for s, part in enumerate(self.parts)]

    def _where(self) -> tuple[np.ndarray, np.ndarray]:
        """For each merged chunk id: its segment and its id there (computed once)."""
        if self._located is None:
            n = sum(int(np.count_nonzero(r >= 0)) for r in self.remaps)
            segment, local = np.zeros(n, np.int32), np.zeros(n, np.int64)
            for s, remap in enumerate(self.remaps):
                kept = np.flatnonzero(remap >= 0)
                segment[remap[kept]], local[remap[kept]] = s, kept
            self._located = segment, local
        return self._located

    @property
    def nbytes(self) -> int:
        return sum(p.codes.nbytes for p in self.parts)


def integer_candidates(
    codes: np.ndarray, levels: np.ndarray, k: int, margin: int, mask: np.ndarray | None = None
) -> np.ndarray:
    """Ascending ids of rows (of those `mask` keeps) whose integer score (codes . levels) is at least
    the k-th largest among them minus `margin` (`_kernel.near_candidates`, or its numpy twin)."""
    if mask is not None and not mask.any():
        return np.zeros(0, np.int64)
    if kernels.RANKING is not None:
        keep = None if mask is None else np.ascontiguousarray(mask).view(np.uint8)
        return np.frombuffer(kernels.RANKING.near_candidates(codes, levels, k, margin, keep), np.int64)
    scores = np.concatenate(
        [codes[s : s + BLOCK_ROWS].astype(np.int64) @ levels.astype(np.int64) for s in range(0, len(codes), BLOCK_ROWS)]
    )
    kept = scores if mask is None else scores[mask]
    kk = min(k, len(kept))
    kth = np.partition(kept, len(kept) - kk)[len(kept) - kk]
    found = scores >= kth - margin
    return np.flatnonzero(found if mask is None else found & mask).astype(np.int64)
