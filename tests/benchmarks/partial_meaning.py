"""Hybrid search over an unfinished meaning index, on the eight question sets (the expected note's rank
among notes, each at its best chunk, as grouped results list them).

For each share of the notes embedded (a random draw of notes, five draws per share), ranks every
question with BM25 and with hybrid over the embedded chunks alone, a chunk not embedded yet given
`--pending` times the dense share its BM25 rank would give (core.fusion.PENDING_SHARE; the product
uses 0.5); with `--fly N`, BM25's top N chunks not embedded yet are embedded at query time and
ranked by cosine with the rest (the vectors of the complete index stand in for them). Prints Hit@5 /
MRR over all questions, over those whose note is embedded, and over the rest. Needs the sets'
meaning indexes (`python tests/benchmarks/tune_fusion.py --embed`).

Run: python tests/benchmarks/partial_meaning.py [--pending 0 0.5 1] [--fly 0 10 20] [--shares ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ragdesk.core import dense as dense_mod
from ragdesk.core import evaluate as ev
from ragdesk.core.dense import load_embedder
from ragdesk.core.fusion import FUSION_DEPTH, FUSIONS, rrf_fuse
from ragdesk.core.params import SearchParams

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_defaults import QUESTIONS, SETS  # noqa: E402
from tune_fusion import open_set  # noqa: E402

DEPTH = FUSION_DEPTH  # each engine's list, as a search fuses them
DRAWS = 5


def note_rank(order: list[int], chunk_note: np.ndarray, expected: set[int]) -> int | None:
    """Rank of the expected note, each note once at its best chunk."""
    seen: set[int] = set()
    for doc in order:
        note = int(chunk_note[doc])
        if note in seen:
            continue
        seen.add(note)
        if note in expected:
            return len(seen)
        if len(seen) >= 100:
            break
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shares", type=float, nargs="+", default=[0.1, 0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--pending", type=float, nargs="+", default=[0.5])
    parser.add_argument("--fly", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    emb = load_embedder()
    fusion = FUSIONS["tuned"]
    ranks: dict[str, list[tuple[int | None, bool]]] = {}
    for name in SETS:
        lib = open_set(name, Path.home() / ".cache" / "ragdesk-tune", embed=False)
        rows = lib.stored_meaning(emb.name)
        if rows is None:
            print(f"{name}: no complete meaning index (run tune_fusion.py --embed)", file=sys.stderr)
            continue
        chunk_note = np.asarray(lib.chunk_note)
        runs = []
        for q in ev.load_questions(QUESTIONS / f"{name}.jsonl"):
            res = lib.search(q.question, SearchParams(k=DEPTH), explain=False)
            expected = {i for i, p in enumerate(lib.note_paths) if p == q.expected or p in q.also_ok}
            runs.append(([(h.chunk_id, h.score) for h in res.hits], emb.embed_query(q.question), expected))
        for share in args.shares:
            for draw in range(DRAWS if share < 1 else 1):
                embedded = np.random.default_rng(draw).random(len(lib.note_paths)) < share
                written = embedded[chunk_note]
                for bm25, query, expected in runs:
                    inside = any(embedded[n] for n in expected)
                    key = f"{share:.2f} bm25"
                    ranks.setdefault(key, []).append((note_rank([d for d, _ in bm25], chunk_note, expected), inside))
                    for fly in args.fly if share < 1 else [0]:
                        known = written.copy()
                        known[[d for d, _ in bm25[:fly]]] = True
                        ids = np.flatnonzero(known)
                        cos = rows[ids].astype(np.float32) @ query
                        top = np.argsort(-cos, kind="stable")[:DEPTH]
                        dense = list(zip(ids[top].tolist(), cos[top].tolist()))
                        for pending in args.pending:
                            dense_mod.PENDING_SHARE = pending
                            fused = rrf_fuse(bm25, dense, 2 * DEPTH, fusion.c, fusion.dense_weight, ~known)
                            rank = note_rank([d for d, _ in fused], chunk_note, expected)
                            label = f"{share:.2f} hybrid, pending {pending:g}"
                            label += f", BM25 top {fly} at query time" if fly else ""
                            ranks.setdefault(label, []).append((rank, inside))

    def score(rs: list[int | None]) -> str:
        if not rs:
            return "–"
        hit = np.mean([1 if r and r <= 5 else 0 for r in rs])
        mrr = np.mean([1 / r if r else 0 for r in rs])
        return f"{hit:.3f} / {mrr:.3f}"

    print("| notes embedded | ranking | all | note embedded | note not embedded |")
    print("|---|---|---:|---:|---:|")
    for key, rs in ranks.items():
        share, ranking = key.split(" ", 1)
        all_, inside, outside = [r for r, _ in rs], [r for r, i in rs if i], [r for r, i in rs if not i]
        print(f"| {float(share):.0%} | {ranking} | {score(all_)} | {score(inside)} | {score(outside)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
