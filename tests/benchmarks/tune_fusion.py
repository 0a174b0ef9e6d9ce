"""Measure meaning search on the eight question sets: BM25, dense (multilingual-e5) and ways of fusing them.

Phase one (`--embed`) builds each set's folder with the default settings into `--index-root` and
computes its meaning index with the default model (resumable: run it again after an interruption).
Phase two ranks every question once with BM25 and once with dense (depth `DEPTH`) and scores each
fusion variant on those two lists: reciprocal rank fusion with several c, dense weights and depths,
normalised score (convex) fusion, and grouping by note (a note ranks by its best chunk). Hit@5 / MRR at
note level (a chunk of the expected note counts), per set and per kind (direct / paraphrase).

Run: python tests/benchmarks/tune_fusion.py --embed   then   python tests/benchmarks/tune_fusion.py
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragdesk.core import evaluate as ev
from ragdesk.core.build import build_index
from ragdesk.core.dense import load_embedder
from ragdesk.core.meaning_writer import meaning_matrix
from ragdesk.core.params import SearchParams
from ragdesk.core.reader import IndexReader
from ragdesk.core.store import IndexDamaged, IndexMissing

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_defaults import DATA, QUESTIONS, SETS, set_parser  # noqa: E402

DEPTH = 200
Ranking = list[tuple[int, float]]  # (chunk id, score), best first
NoteOf = Callable[[int], int]  # chunk id -> note number
Fuse = Callable[[Ranking, Ranking, NoteOf], list[int]]


def open_set(name: str, root: Path, embed: bool) -> IndexReader:
    folder = DATA / SETS[name]
    try:
        previous = IndexReader.open(folder, root / name)
    except (IndexMissing, IndexDamaged):
        previous = None
    # a fresh copy of the data (new mtimes) rebuilds the set: keep its hours of meaning rows
    lib, _ = build_index(folder, root / name, previous=previous)
    if embed:
        emb = load_embedder()
        t0 = time.monotonic()
        before = lib.meaning_progress(emb.name)[0]

        def progress(done: int, total: int) -> None:
            if done % 256 < emb.batch or done == total:
                rate = done / (time.monotonic() - t0)
                print(f"  {name}: {before + done}/{lib.n_chunks} chunks, {rate:.2f}/s", file=sys.stderr, flush=True)

        meaning_matrix(lib, emb, progress=progress)
        took = time.monotonic() - t0
        print(f"{name}: {lib.n_chunks} chunks, meaning index complete in {took:.0f} s", file=sys.stderr)
    return lib


def rrf(c: float = 60, w: float = 1.0, depth: int = 100, cut: float = 0.0) -> Fuse:
    """RRF with dense weight `w` over each engine's top `depth`; `cut` drops BM25 hits scoring below
    that share of BM25's best (stray matches of one trigram)."""

    def fuse(bm25: Ranking, dense: Ranking, _note: NoteOf) -> list[int]:
        if cut and bm25:
            bm25 = [(d, s) for d, s in bm25 if s >= cut * bm25[0][1]]
        score: dict[int, float] = {}
        for i, (doc, _) in enumerate(bm25[:depth]):
            score[doc] = score.get(doc, 0.0) + 1 / (c + i + 1)
        for i, (doc, _) in enumerate(dense[:depth]):
            score[doc] = score.get(doc, 0.0) + w / (c + i + 1)
        return sorted(score, key=lambda d: (-score[d], d))

    return fuse


def convex(alpha: float, depth: int = 100) -> Fuse:
    """alpha x min-max normalised cosine + (1 - alpha) x min-max normalised BM25 over each top `depth`."""

    def norm(r: Ranking) -> dict[int, float]:
        if not r:
            return {}
        s = np.array([x for _, x in r[:depth]])
        lo, hi = s.min(), s.max()
        return {d: (x - lo) / (hi - lo) if hi > lo else 1.0 for d, x in r[:depth]}

    def fuse(bm25: Ranking, dense: Ranking, _note: NoteOf) -> list[int]:
        b, d = norm(bm25), norm(dense)
        score = {doc: alpha * d.get(doc, 0.0) + (1 - alpha) * b.get(doc, 0.0) for doc in b.keys() | d.keys()}
        return sorted(score, key=lambda x: (-score[x], x))

    return fuse


def note_rrf(c: float = 60, w: float = 1.0, depth: int = 100) -> Fuse:
    """RRF over note rankings (each engine's list reduced to notes at their best chunk), so a note with
    several matching chunks does not push other notes down one engine's list; each note is shown at the
    best chunk either engine found."""

    def fuse(bm25: Ranking, dense: Ranking, note: NoteOf) -> list[int]:
        score: dict[int, float] = {}
        shown: dict[int, int] = {}
        for ranking, weight in ((bm25[:depth], 1.0), (dense[:depth], w)):
            seen: set[int] = set()
            for doc, _ in ranking:
                n = note(doc)
                if n in seen:
                    continue
                seen.add(n)
                score[n] = score.get(n, 0.0) + weight / (c + len(seen))
                shown.setdefault(n, doc)
        return [shown[n] for n in sorted(score, key=lambda n: (-score[n], n))]

    return fuse


VARIANTS: dict[str, Fuse] = {
    "bm25": lambda b, d, _n: [doc for doc, _ in b],
    "dense": lambda b, d, _n: [doc for doc, _ in d],
    **{f"note-rrf c={c}": note_rrf(c) for c in (10, 30, 60)},
    **{f"note-rrf c=60 w={w}": note_rrf(60, w) for w in (0.7, 1.5)},
    **{f"rrf c={c}": rrf(c) for c in (3, 5, 10, 20, 30, 60, 100)},
    **{f"rrf c=10 w={w}": rrf(10, w) for w in (0.7, 1.3)},
    **{f"rrf c=60 w={w}": rrf(60, w) for w in (0.5, 1.5, 2.0)},
    **{f"rrf c=60 depth={n}": rrf(60, 1.0, n) for n in (20, 50, 200)},
    **{f"rrf c=60 cut={x}": rrf(60, 1.0, 100, x) for x in (0.2, 0.4)},
    **{f"rrf c=30 w=1.5 cut={x}": rrf(30, 1.5, 100, x) for x in (0.2, 0.4)},
    **{f"convex a={a}": convex(a) for a in (0.3, 0.5, 0.7)},
}


def note_rank(lib: IndexReader, order: list[int], q: ev.Question) -> int | None:
    """Rank of the expected note when results are grouped by note (each note once, at its best chunk)."""
    seen: list[str] = []
    for doc in order:
        path = lib.chunk_path(doc) if hasattr(lib, "chunk_path") else lib.note_paths[int(lib.chunk_note[doc])]
        if path in seen:
            continue
        seen.append(path)
        if path == q.expected or path in q.also_ok:
            return len(seen)
        if len(seen) >= 100:
            return None
    return None


def chunk_rank(lib: IndexReader, order: list[int], q: ev.Question) -> int | None:
    """Rank of the first chunk of the expected note (chunks listed as they come, several per note)."""
    for i, doc in enumerate(order[:100], start=1):
        path = lib.note_paths[int(lib.chunk_note[doc])]
        if path == q.expected or path in q.also_ok:
            return i
    return None


def measure(names: list[str], root: Path) -> list[dict[str, object]]:
    emb = load_embedder()
    rows: list[dict[str, object]] = []
    for name in names:
        lib = open_set(name, root, embed=False)
        if not lib.has_meaning(emb.name):
            print(f"{name}: no complete meaning index yet (run --embed)", file=sys.stderr)
            continue
        nearest = lib.nearest(emb.name)
        questions = ev.load_questions(QUESTIONS / f"{name}.jsonl")
        note_of = np.asarray(lib.chunk_note).item  # chunk id -> note number

        runs = []
        for q in questions:
            res = lib.search(q.question, SearchParams(k=DEPTH), explain=False)
            bm25 = [(h.chunk_id, h.score) for h in res.hits]
            ids, cos = nearest.top_k(emb.embed_query(q.question), DEPTH)
            runs.append((q, bm25, list(zip(ids.tolist(), cos.tolist()))))
        for variant, fuse in VARIANTS.items():
            for grouped in (False, True):
                ranks = []
                for q, bm25, dense in runs:
                    order = fuse(bm25, dense, note_of)
                    ranks.append((q.kind, (note_rank if grouped else chunk_rank)(lib, order, q)))
                row: dict[str, object] = {"set": name, "variant": variant, "grouped": grouped}
                for kind in ("all", "direct", "paraphrase"):
                    rs = [r for k, r in ranks if kind == "all" or k == kind]
                    row[f"{kind}_hit@5"] = sum(1 for r in rs if r and r <= 5) / max(len(rs), 1)
                    row[f"{kind}_mrr"] = sum(1 / r for r in rs if r) / max(len(rs), 1)
                    row[f"{kind}_n"] = len(rs)
                rows.append(row)
    return rows


def summary(rows: list[dict[str, object]]) -> None:
    sets = sorted({str(r["set"]) for r in rows})
    print(f"{len(sets)} sets: {', '.join(sets)}\n")
    print("| variant | grouped | Hit@5 | MRR | paraphrase Hit@5 | direct Hit@5 | worst set Hit@5 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    keys = sorted(
        {(str(r["variant"]), bool(r["grouped"])) for r in rows}, key=lambda k: (list(VARIANTS).index(k[0]), k[1])
    )
    for variant, grouped in keys:
        rs = [r for r in rows if r["variant"] == variant and r["grouped"] == grouped]
        mean = {
            k: float(np.mean([float(r[k]) for r in rs]))
            for k in ("all_hit@5", "all_mrr", "paraphrase_hit@5", "direct_hit@5")
        }
        worst = min(float(r["all_hit@5"]) for r in rs)
        print(
            f"| {variant} | {'yes' if grouped else 'no'} | {mean['all_hit@5']:.3f} | {mean['all_mrr']:.3f} | "
            f"{mean['paraphrase_hit@5']:.3f} | {mean['direct_hit@5']:.3f} | {worst:.3f} |"
        )


def main() -> int:
    p = set_parser(__doc__)
    p.add_argument("--embed", action="store_true", help="build and compute the meaning indexes (resumable)")
    args = p.parse_args()
    if not DATA.is_dir():
        print(f"needs {DATA}", file=sys.stderr)
        return 2
    names = args.sets.split(",")
    root = args.index_root
    if args.embed:
        for name in names:
            open_set(name, root, embed=True)
        return 0
    rows = measure(names, root)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        summary(rows)
        print("\nper set (grouped, rrf c=60 vs bm25):")
        for r in rows:
            if r["grouped"] and r["variant"] in ("bm25", "dense", "rrf c=60"):
                print(
                    f"  {r['set']:18} {r['variant']:10} {r['all_hit@5']:.3f} / {r['all_mrr']:.3f}"
                    f"  paraphrase {r['paraphrase_hit@5']:.3f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
