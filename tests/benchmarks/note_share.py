"""The tuned fusion's note share measured through the product's own search, on the eight question sets.

Runs `IndexReader.search` in hybrid mode with the tuned fusion at each note weight (0: none, the
fusion before 2026-12-03), grouped by note and not, and prints Hit@5 / MRR per set at the note level
(a chunk of the expected note counts) and as `ragdesk eval` counts (chunk level where a set's
questions carry the answer's snippet), plus paraphrase questions alone; BM25's defaults beside them.
Needs the sets' meaning indexes (`python tests/benchmarks/tune_fusion.py --embed`).

Run: python tests/benchmarks/note_share.py [WEIGHT ...]   (default: 0 0.25 0.5)
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from ragdesk.core import evaluate as ev
from ragdesk.core.dense import load_embedder
from ragdesk.core.fusion import FUSIONS
from ragdesk.core.reader import IndexReader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_defaults import DATA, QUESTIONS, SETS  # noqa: E402
from tune_fusion import note_rank  # noqa: E402

ROOT = Path.home() / ".cache" / "ragdesk-tune"  # where tune_fusion.py keeps the sets' indexes
Ranked = list[tuple[int | None, int | None, str]]  # per question: note rank, eval rank, kind


def ranks_of(lib: IndexReader, questions: list[ev.Question], **search: object) -> Ranked:
    """Per question: the expected note's rank (each note once), the first matching chunk's rank as
    `ragdesk eval` counts it, and the question's kind."""
    out = []
    for q in questions:
        order = [h.chunk_id for h in lib.search(q.question, k=100, explain=False, **search).hits]  # type: ignore[arg-type]
        first = next((i for i, doc in enumerate(order, start=1) if ev.chunk_matches(lib, doc, q)), None)
        out.append((note_rank(lib, order, q), first, q.kind))
    return out


def score(ranks: list[int | None]) -> str:
    hit = np.mean([1 if r and r <= 5 else 0 for r in ranks])
    mrr = np.mean([1 / r if r else 0 for r in ranks])
    return f"{hit:.3f} / {mrr:.3f}"


def main() -> int:
    weights = [float(w) for w in sys.argv[1:]] or [0.0, 0.25, 0.5]
    emb = load_embedder()
    tuned = FUSIONS["tuned"]
    rows: dict[str, dict[str, Ranked]] = {}
    for name, folder in SETS.items():
        lib = IndexReader.open(DATA / folder, ROOT / name)
        if not lib.has_meaning(emb.name):
            print(f"{name}: no meaning index; run tune_fusion.py --embed first", file=sys.stderr)
            return 1
        questions = ev.load_questions(QUESTIONS / f"{name}.jsonl")
        rows.setdefault("bm25 (its defaults)", {})[name] = ranks_of(lib, questions, mode="bm25")
        try:
            for w in weights:
                FUSIONS["tuned"] = replace(tuned, note_weight=w)
                for group in (True, False):
                    label = f"hybrid, note weight {w:g}, " + ("grouped" if group else "every chunk in its place")
                    ranked = ranks_of(lib, questions, mode="hybrid", embedder=emb, group=group)
                    rows.setdefault(label, {})[name] = ranked
        finally:
            FUSIONS["tuned"] = tuned
        print(f"{name}: done", file=sys.stderr, flush=True)
    names = list(SETS)
    print("| ranking | counted | all | paraphrases | " + " | ".join(names) + " |")
    print("|---|---|---:|---:|" + "---:|" * len(names))
    for label, per in rows.items():
        for how, at in (("note level", 0), ("as eval counts", 1)):
            every = [r[at] for rs in per.values() for r in rs]
            para = [r[at] for rs in per.values() for r in rs if r[2] == "paraphrase"]
            cells = " | ".join(score([r[at] for r in per[n]]) for n in names)
            print(f"| {label} | {how} | {score(every)} | {score(para)} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
