"""What grouping by note costs the prompt: is the chunk holding the answer's snippet among the first
five shown? (The prompt takes the rows shown; a note's folded chunks are not in it.)

On the three question sets with snippets, for BM25 and hybrid (the default fusion's RRF, c = 10),
each as chunks ranked (ungrouped), grouped by note (each note once, at its best chunk: the
default for hybrid) and clustered (each note at its best chunk's place, its other matching chunks
right after it). Needs the sets' meaning indexes: run `tune_fusion.py --embed` first.

    python tests/benchmarks/chunk_level.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragdesk.core import evaluate as ev
from ragdesk.core.dense import TUNED_C, load_embedder
from ragdesk.core.params import SearchParams

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_defaults import QUESTIONS  # noqa: E402
from tune_fusion import DEPTH, open_set, rrf  # noqa: E402

SETS = ("til-notes-en", "tldr-pages-cs", "naucse-python-cs")  # the sets whose questions carry snippets
NoteOf = Callable[[int], int]


def _by_note(order: list[int], note: NoteOf) -> list[list[int]]:
    """Each note's chunks in `order`, the notes in the order of their best chunk."""
    members: dict[int, list[int]] = {}
    for d in order:
        members.setdefault(note(d), []).append(d)
    return list(members.values())  # dicts keep the notes' first-seen order


def grouped(order: list[int], note: NoteOf) -> list[int]:
    return [chunks[0] for chunks in _by_note(order, note)]


def clustered(order: list[int], note: NoteOf) -> list[int]:
    return [d for chunks in _by_note(order, note) for d in chunks]


def main() -> int:
    emb = load_embedder()
    root = Path.home() / ".cache" / "ragdesk-tune"
    ranks: dict[str, dict[str, list[int | None]]] = {}
    for name in SETS:
        lib = open_set(name, root, embed=False)
        if not lib.has_meaning(emb.name):
            print(f"{name}: no complete meaning index yet (tune_fusion.py --embed)", file=sys.stderr)
            return 2
        nearest = lib.nearest(emb.name)
        note = np.asarray(lib.chunk_note).item
        for q in ev.load_questions(QUESTIONS / f"{name}.jsonl"):
            bm25 = [(h.chunk_id, h.score) for h in lib.search(q.question, SearchParams(k=DEPTH), explain=False).hits]
            ids, cos = nearest.top_k(emb.embed_query(q.question), DEPTH)
            hybrid = rrf(TUNED_C)(bm25, list(zip(ids.tolist(), cos.tolist())), note)
            for engine, order in (("bm25", [d for d, _ in bm25]), ("hybrid", hybrid)):
                for shape, arrange in (("chunks", lambda o, _n: o), ("grouped", grouped), ("clustered", clustered)):
                    shown = arrange(order, note)[:100]
                    rank = next((i for i, d in enumerate(shown, 1) if ev.chunk_matches(lib, d, q)), None)
                    ranks.setdefault(f"{engine}, {shape}", {}).setdefault(name, []).append(rank)
    print("| ranking | chunk level Hit@5 | MRR | " + " | ".join(SETS) + " |")
    print("|---|---:|---:|" + "---:|" * len(SETS))
    for label, per in ranks.items():
        hit = [np.mean([r is not None and r <= 5 for r in rs]) for rs in per.values()]
        mrr = [np.mean([1 / r if r else 0.0 for r in rs]) for rs in per.values()]
        cells = " | ".join(f"{h:.3f}" for h in hit)
        print(f"| {label} | {np.mean(hit):.3f} | {np.mean(mrr):.3f} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
