"""The BM25 formula, in one place: scalar (for explanations) and vectorized (for ranking)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def check_params(k1: float, b: float) -> None:
    """k1 >= 0 and 0 <= b <= 1, both finite: every contribution stays positive, which the ranking's
    score bounds rely on; other values are refused (ValueError)."""
    if not (math.isfinite(k1) and k1 >= 0 and 0 <= b <= 1):
        raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, both finite (got k1 = {k1:g}, b = {b:g})")


def idf(n_docs: int, n_t: int) -> float:
    """idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)); always positive."""
    return math.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))


def length_norm(doc_len: float, avgdl: float, k1: float, b: float) -> float:
    """The k1 * (1 - b + b * |D| / avgdl) part of the denominator."""
    return k1 * (1.0 - b + b * doc_len / avgdl) if avgdl > 0 else k1


def term_score(idf_t: Any, f: Any, norm: Any, k1: float) -> Any:
    """idf * f * (k1 + 1) / (f + norm), for numbers or arrays, evaluated left to right as the compiled
    kernel does, so every path gives the same floats. With idf_t = 1.0 it is the term-frequency weight
    the score bounds use (1.0 * f is exact)."""
    return idf_t * f * (k1 + 1.0) / (f + norm)


def contribution(idf_t: float, f: float, doc_len: float, avgdl: float, k1: float, b: float) -> float:
    """One term's contribution to one chunk's score; 0 when f = 0."""
    if f <= 0:
        return 0.0
    return float(term_score(idf_t, f, length_norm(doc_len, avgdl, k1, b), k1))


def idf_array(n_docs: int, n_t: np.ndarray) -> np.ndarray:
    return np.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))


def length_norms(doc_len: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """Vectorized `length_norm` (same operation order, so the same floats)."""
    if avgdl <= 0:
        return np.full(doc_len.shape, k1)
    return k1 * (1.0 - b + b * doc_len / avgdl)
