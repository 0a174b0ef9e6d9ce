"""Fit the injection probe (core/injection_probe.py) and write resources/injection_probe.json.

    PYTHONPATH=. python tests/benchmarks/train_injection_probe.py [--chunks 4000] [--rate 0.0007] [--lam 1e-5]

Positives: the instructions of tests/data/injections/intents.txt (`+` lines), the marked instructions of
positives.txt and of fresh.txt's development part (its held-out third is never read here), each as the
probe will read it (the sentences of its readings that overlap the mark). Negatives: intents.txt's `-`
lines, the unmarked sentences of those records, and every sentence of `--chunks` random chunks of
../shared/data (seeded; injection_recall.py judges on other chunks). A logistic regression on the meaning
model's vectors, positives weighted to balance; the threshold flags at most `--rate` of the training
chunks. Vectors are cached in ~/.cache/ragdesk-bench (0600).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
from pathlib import Path

import numpy as np

from ragdesk.core.dense import load_embedder
from ragdesk.core.injection_probe import windows
from tests.data import negatives
from tests.data.labelled import INJECTIONS, Record, load

HERE = Path(__file__).resolve().parents[1] / "data" / "injections"
INTENTS = HERE / "intents.txt"
FRESH = HERE / "fresh.txt"
OUT = Path(__file__).resolve().parents[2] / "resources" / "injection_probe.json"
SEED = negatives.PROBE_SEED
# Records whose marked text reads as written (others are disguises: encoded, spelled oddly, hidden).
PLAIN = {"plain", "paraphrase", "html comment", "image alt text", "link title", "footnote", "code comment",
         "front matter", "heading for the AI", "spanish", "polish", "chinese", "german", "italian",
         "other languages", "set aside", "only task", "repeat above", "tool call", "exfil link", "split over lines"}


class Vectors:
    """The embedder's vectors of texts, cached on disk by the text's hash."""

    def __init__(self) -> None:
        self.embedder = load_embedder("e5")
        self.path = negatives.CACHE.parent / f"probe-sentences-{self.embedder.name}.pickle"
        self.cache: dict[str, np.ndarray] = pickle.loads(self.path.read_bytes()) if self.path.exists() else {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [(k, t) for k, t in dict(zip(keys, texts)).items() if k not in self.cache]
        for i in range(0, len(missing), 512):
            part = missing[i : i + 512]
            for (k, _), v in zip(part, self.embedder.embed_sentences([t for _, t in part])):
                self.cache[k] = v
        if missing:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.cache))
            os.chmod(self.path, 0o600)
        return np.array([self.cache[k] for k in keys], np.float32).reshape(len(texts), -1)


def marked_sentences(record: Record) -> tuple[list[str], list[str]]:
    """(instruction sentences, other sentences) of a labelled record: the marked text as a person would
    write it (the readings undo the disguises before the probe reads them), and the record's sentences
    apart from the mark."""
    pos = [record.text[s:e].strip() for s, e in record.spans] if record.cls in PLAIN else []
    neg = [w for start, end, w in windows(record.text) if not any(s < end and start < e for s, e in record.spans)]
    return pos, neg


def split_chunks() -> tuple[list[str], list[str]]:
    """The chunks of ../shared/data to fit on and to judge on (negatives.probe_split)."""
    return negatives.probe_split([text for _, _, text in negatives.cached_shared_chunks()])


def fit(x: np.ndarray, y: np.ndarray, lam: float, steps: int = 25) -> tuple[np.ndarray, float]:
    """Weighted logistic regression (each class half the weight), L2 penalty `lam` on the weights, by
    Newton's method (385 unknowns: a few steps of a small linear solve)."""
    weight = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1))
    xb = np.hstack([x, np.ones((len(x), 1))]).astype(np.float64)
    theta = np.zeros(xb.shape[1])
    penalty = np.full(xb.shape[1], lam)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ theta)))
        grad = xb.T @ ((p - y) * weight) + penalty * theta
        hess = (xb * (weight * p * (1 - p))[:, None]).T @ xb + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-6:
            break
    return theta[:-1], float(theta[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=4000, help="training chunks of ../shared/data")
    ap.add_argument("--rate", type=float, default=0.0007, help="share of training chunks the threshold flags")
    ap.add_argument("--lam", type=float, default=1e-5, help="L2 penalty")
    args = ap.parse_args()
    pos, neg = [], []
    for line in INTENTS.read_text(encoding="utf-8").splitlines():
        if line[:2] in ("+ ", "- "):
            (pos if line[0] == "+" else neg).append(line[2:].strip())
    for r in load(INJECTIONS) + [r for r in load(FRESH) if r.shape == "dev"]:
        p, n = marked_sentences(r)
        pos += p
        neg += n
    chunks = split_chunks()[0][: args.chunks]
    chunk_windows = [[w for _, _, w in windows(c)] for c in chunks]
    vectors = Vectors()
    pos = list(dict.fromkeys(pos))
    xp, xn = vectors(pos), vectors(neg + [w for ws in chunk_windows for w in ws])
    x = np.vstack([xp, xn])
    y = np.r_[np.ones(len(xp)), np.zeros(len(xn))]
    w, b = fit(x, y, args.lam)
    # the threshold: the chunk-level score (its best sentence) that flags `rate` of the training chunks
    flat = xn[len(neg) :] @ w + b
    best, at = [], 0
    for ws in chunk_windows:
        best.append(flat[at : at + len(ws)].max() if ws else -np.inf)
        at += len(ws)
    threshold = float(np.quantile(best, 1 - args.rate))
    caught = float(np.mean(xp @ w + b >= threshold))
    OUT.write_text(
        json.dumps(
            {
                "model": vectors.embedder.name,
                "threshold": round(threshold, 4),
                "bias": round(float(b), 6),
                "trained": {"instructions": len(pos), "other sentences": len(xn), "chunks": len(chunks),
                            "seed": SEED, "lam": args.lam, "chunk_rate": args.rate},
                "weights": [round(float(v), 6) for v in w],
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(pos)} instructions, {len(xn)} other sentences ({len(chunks)} chunks); threshold {threshold:.3f}")
    print(f"training instructions above it: {caught:.3f}; written {OUT}")


if __name__ == "__main__":
    main()
