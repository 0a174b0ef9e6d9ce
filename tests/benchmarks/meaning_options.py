"""Issue 39's meaning-side options, each measured on the eight question sets through the product's own
hybrid and dense search: how the query is given to e5 (query), how chunks are presented to it
(present), which vector stands for a whole note in the fusion's note share (note; hybrid only), chunk
rows blended with their neighbours' (smooth), a chunk's cosine taken also from its sentences in windows
of about 30 words, each embedded (windows), and the fusion's dense weight (weight; hybrid only).
Note level (a chunk of the expected note counts), Hit@5 / MRR pooled over every question and over
paraphrases, then per set; today's setting is the first row of each family.

Nothing on disk changes: an option is applied in this process only. Rows of other presentations are
embedded once and kept in INDEX_ROOT/options/ (every chunk of the eight sets per presentation, about
a quarter of an hour each on two cores). Needs the sets' meaning indexes (`python tests/benchmarks/tune_fusion.py
--embed`).

Run: python tests/benchmarks/meaning_options.py [--families query,present,note,smooth,windows,weight] [--sets ...]
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from unittest import mock

import numpy as np

from ragdesk.core import evaluate as ev
from ragdesk.core.chunking import CONTEXT_SEP, note_title
from ragdesk.core.dense import E5Embedder, load_embedder
from ragdesk.core.fusion import FUSIONS
from ragdesk.core.nearest import NearestRows, SegmentedNearest
from ragdesk.core.reader import IndexReader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from note_share import ranks_of, score  # noqa: E402
from tune_defaults import QUESTIONS, set_parser  # noqa: E402
from tune_fusion import open_set  # noqa: E402

Rows = Callable[[IndexReader, str], np.ndarray]  # (reader, set name) -> float16 rows, one per chunk or note
ARGS = None  # the parsed command line (main)
EMB: E5Embedder = None  # type: ignore[assignment]  # loaded by main


@dataclass(frozen=True)
class Option:
    """One way of searching; the fields left None are today's."""

    label: str
    query: Callable[[E5Embedder, str], np.ndarray] | None = None  # how a query is embedded
    rows: Rows | None = None  # the chunk rows searched
    note_rows: Rows | None = None  # one row per note for the whole-note share (else the sum of its chunks')
    windows: float | None = None  # a chunk's cosine blended with its best window's by this share
    dense_weight: float | None = None


# ---- the note's first sentence, the texts shown to e5 ------------------------------------------------
SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")
MARKUP = (
    (re.compile(r"!?\[\[([^\]|#]*)(#[^\]|]*)?(\|([^\]]*))?\]\]"), lambda m: m.group(4) or m.group(1)),
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"[`*_>#|]+"), " "),
)


def plain(text: str) -> str:
    for pattern, repl in MARKUP:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def lead(lib: IndexReader, note: int) -> str:
    """The note's first sentence (at most 40 words): of its first paragraph of prose."""
    for para in lib.chunk(int(lib.note_first_chunk[note])).text.split("\n\n"):
        text = plain(para)
        if len(text.split()) >= 4 and not para.lstrip().startswith(("```", "|", "-", "*", "1.")):
            return " ".join(SENTENCE_END.split(text)[0].split()[:40])
    return ""


def chunk_texts(lib: IndexReader, with_lead: bool, context: bool = True) -> list[str]:
    leads: dict[int, str] = {}
    out = []
    for cid in range(lib.n_chunks):
        text = lib.chunk(cid).text
        if not context:
            out.append(text)
            continue
        parts = lib.segments[0].chunk_context_parts(cid)
        note = int(lib.chunk_note[cid])
        if with_lead and note not in leads:
            leads[note] = lead(lib, note)
        extra = [leads[note]] if with_lead and leads[note] and leads[note] not in plain(text) else []
        out.append(CONTEXT_SEP.join(parts[:1] + extra + parts[1:]) + "\n" + text)
    return out


def note_texts(lib: IndexReader, words: int) -> list[str]:
    """Per note: its title, then its first sentence (`words` 0) or its first `words` words."""
    segment, out = lib.segments[0], []
    for n, note in enumerate(segment.notes):
        title = note_title(note.meta, note.path)
        if words:
            out.append(title + "\n" + " ".join(plain(segment.note_text(n)[note.body_start :]).split()[:words]))
        else:
            out.append(title + "\n" + lead(lib, n))
    return out


WINDOW_WORDS = 30
WINDOW_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def chunk_windows(lib: IndexReader) -> tuple[list[str], np.ndarray]:
    """Each chunk of more than one window: its sentences and lines gathered into windows of at most
    WINDOW_WORDS words (a longer sentence alone), each after the chunk's title and headings; with the
    chunk id of each window."""
    texts, owner = [], []
    for cid in range(lib.n_chunks):
        windows: list[list[str]] = [[]]
        for piece in filter(None, (p.strip() for p in WINDOW_SPLIT.split(lib.chunk(cid).text))):
            if windows[-1] and len(" ".join(windows[-1] + [piece]).split()) > WINDOW_WORDS:
                windows.append([])
            windows[-1].append(piece)
        if len(windows) > 1:
            context = CONTEXT_SEP.join(lib.segments[0].chunk_context_parts(cid))
            texts += [context + "\n" + " ".join(w) for w in windows]
            owner += [cid] * len(windows)
    return texts, np.array(owner, np.int64)


class WindowNearest(SegmentedNearest):
    """Dense top k where a chunk's cosine is (1 - share) x its own + share x its best window's."""

    def __init__(self, base: SegmentedNearest, windows: np.ndarray, owner: np.ndarray, share: float) -> None:
        self.__dict__.update(base.__dict__)
        self.rows = np.asarray(base.parts[0].rows, np.float32)
        self.windows, self.owner, self.share = windows.astype(np.float32), owner, share

    def top_k(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        own = self.rows @ query
        best = np.full(len(own), -np.inf)
        np.maximum.at(best, self.owner, self.windows @ query)
        cosines = np.where(np.isfinite(best), (1 - self.share) * own + self.share * best, own)
        ids = np.argsort(-cosines, kind="stable")[:k]
        return ids, cosines[ids]


def embedded(key: str, texts: Callable[[IndexReader], list[str]]) -> Rows:
    """Rows of `texts`, embedded once per set and kept under INDEX_ROOT/options/."""

    def rows(lib: IndexReader, name: str) -> np.ndarray:
        path = ARGS.index_root / "options" / f"{name}-{key}.npy"
        if path.exists():
            return np.load(path)
        todo, t0 = texts(lib), time.monotonic()
        out = np.concatenate([EMB.embed(todo[i : i + 32]) for i in range(0, len(todo), 32)]).astype(np.float16)
        print(f"  {name} {key}: {len(todo)} texts in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, out)
        return out

    return rows


def stored(lib: IndexReader, _name: str) -> np.ndarray:
    return np.asarray(lib.segment_rows(EMB.name)[0])


def blended(weight: float, by_note: bool) -> Rows:
    """Each chunk's row plus `weight` x its neighbours' in the same note (or its note's unit sum)."""

    def rows(lib: IndexReader, name: str) -> np.ndarray:
        x = stored(lib, name).astype(np.float32)
        note = np.asarray(lib.chunk_note)
        out = x.copy()
        if by_note:
            sums = np.zeros((int(note.max()) + 1, x.shape[1]))
            np.add.at(sums, note, x)
            out += weight * (sums / np.linalg.norm(sums, axis=1, keepdims=True))[note].astype(np.float32)
        else:
            prev = np.flatnonzero(np.r_[False, note[1:] == note[:-1]])
            out[prev] += weight * x[prev - 1]
            out[prev - 1] += weight * x[prev]
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float16)

    return rows


FAMILIES: dict[str, list[Option]] = {
    "query": [
        Option('"query: " + the question (today)'),
        Option('"passage: " + the question', query=lambda e, q: e._model._embed([f"passage: {q}"])[0]),
        Option("lowercased", query=lambda e, q: e._model.query(q.lower())),
        Option('without the final "?"', query=lambda e, q: e._model.query(q.rstrip(" ?"))),
    ],
    "present": [
        Option("title and headings, then the text (today)"),
        Option("the text alone", rows=embedded("bare", lambda lib: chunk_texts(lib, False, context=False))),
        Option(
            "title, the note's first sentence, headings, then the text",
            rows=embedded("lead", lambda lib: chunk_texts(lib, True)),
        ),
    ],
    "note": [
        Option("the sum of the note's chunk rows (today)"),
        Option("title + first sentence, embedded", note_rows=embedded("note-lead", lambda lib: note_texts(lib, 0))),
        Option("title + first 200 words, embedded", note_rows=embedded("note-200", lambda lib: note_texts(lib, 200))),
    ],
    "smooth": [
        Option("each chunk's own row (today)"),
        Option("+ 0.3 x its neighbours' rows", rows=blended(0.3, by_note=False)),
        Option("+ 0.3 x its note's summed row", rows=blended(0.3, by_note=True)),
    ],
    "windows": [
        Option("each chunk's own row (today)"),
        *(Option(f"{w:g} x its best {WINDOW_WORDS}-word window's cosine", windows=w) for w in (0.3, 0.5, 1)),
    ],
    "weight": [
        Option(f"dense weight {w:g}" + (" (today)" if w == 1 else ""), dense_weight=w) for w in (1, 0.5, 0.7, 1.4, 2)
    ],
}


FUSION_ONLY = {"note", "weight"}  # options of the fusion alone: dense ranks as today


@contextlib.contextmanager
def applied(option: Option, lib: IndexReader, name: str) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        if option.query is not None:
            stack.enter_context(mock.patch.object(EMB, "_embed_query", lambda q: option.query(EMB, q)))
        if option.rows is not None:
            nearest = SegmentedNearest([NearestRows(option.rows(lib, name))], lib.layout.chunk_remap)
            stack.enter_context(mock.patch.dict(lib._nearest, {EMB.name: nearest}))
        if option.windows is not None:
            texts, owner = chunk_windows(lib)
            rows = embedded("windows", lambda _lib: texts)(lib, name)
            nearest = WindowNearest(lib.nearest(EMB.name, False), rows, owner, option.windows)
            stack.enter_context(mock.patch.dict(lib._nearest, {EMB.name: nearest}))
        if option.note_rows is not None:
            vectors = option.note_rows(lib, name).astype(np.float32)

            def cosines(
                _self: SegmentedNearest, query: np.ndarray, ranges: list[tuple[int, int]]
            ) -> list[float | None]:
                return (vectors[[int(lib.chunk_note[first]) for first, _ in ranges]] @ query).tolist()

            stack.enter_context(mock.patch.object(SegmentedNearest, "summed_cosines", cosines))
        if option.dense_weight is not None:
            tuned = replace(FUSIONS["tuned"], dense_weight=option.dense_weight)
            stack.enter_context(mock.patch.dict(FUSIONS, {"tuned": tuned}))
        EMB._queries.clear()
        yield
    EMB._queries.clear()


def setting(option: Option) -> tuple[object, ...]:
    """What an option changes (its label aside): today's rows of every family are one setting."""
    return option.query, option.rows, option.note_rows, option.windows, option.dense_weight


def main() -> int:
    global ARGS, EMB
    p = set_parser(__doc__)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--modes", default="hybrid,dense")
    ARGS = p.parse_args()
    EMB = load_embedder()
    names, modes = ARGS.sets.split(","), ARGS.modes.split(",")
    families = {f: FAMILIES[f] for f in ARGS.families.split(",")}
    ranks: dict[tuple[tuple[object, ...], str, str], list[tuple[int | None, str]]] = {}
    for name in names:
        lib = open_set(name, ARGS.index_root, embed=False)
        assert len(lib.segments) == 1, "a freshly built set has one segment"
        questions = ev.load_questions(QUESTIONS / f"{name}.jsonl")  # ranked at the note level
        for option in {setting(o): o for fam in families.values() for o in fam}.values():  # today's once
            with applied(option, lib, name):
                for mode in modes:
                    ranked = ranks_of(lib, questions, mode=mode, embedder=EMB)
                    ranks[(setting(option), mode, name)] = [(note, kind) for note, _, kind in ranked]
        print(f"{name}: done", file=sys.stderr, flush=True)
    short = [n.replace("obsidian-help-", "help-") for n in names]
    for family, options in families.items():
        for mode in [m for m in modes if m == "hybrid" or family not in FUSION_ONLY]:
            print(f"\n{family}, {mode}\n\n| option | all | paraphrases | " + " | ".join(short) + " |")
            print("|---|---:|---:|" + "---:|" * len(names))
            for o in options:
                per = [ranks[(setting(o), mode, n)] for n in names]
                every = [r for rs in per for r, _ in rs]
                para = [r for rs in per for r, kind in rs if kind == "paraphrase"]
                cells = " | ".join(score([r for r, _ in rs]) for rs in per)
                print(f"| {o.label} | {score(every)} | {score(para)} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
