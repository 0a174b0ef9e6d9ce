"""Retrieval quality: questions files, Hit@k, MRR and nDCG@10, per question and aggregated.

A question names the note that answers it, optionally narrowed to a text snippet or a
line range the right chunk must contain or overlap. BEIR folders (queries.jsonl +
qrels/*.tsv) are evaluated per document (one note per document, a note ranked by its
best chunk).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .analyzers import ANALYZERS
from .build import BuildCancelled, build_index
from .errors import QuestionsError  # noqa: F401 (re-exported)
from .modes import Mode
from .params import IndexSettings, SearchParams
from .reader import IndexReader

HIT_KS = (1, 3, 5, 10)
CHUNK_SIZES = (20, 40, 80, 160, 320)  # the context-budget experiment: 320 words filled by chunks of each size
EVAL_DEPTH = 100  # how deep a question's answer is looked for (MRR counts it down to here)
GRID_K1 = (0.4, 0.8, 1.2, 1.6, 2.0)
GRID_B = (0.0, 0.25, 0.5, 0.75, 1.0)
Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected: str  # note path relative to the folder
    snippet: str = ""
    lines: tuple[int, int] | None = None
    also_ok: tuple[str, ...] = ()
    kind: str = ""


def _parse_question(item: Any, where: str) -> Question:
    if not isinstance(item, dict):
        raise QuestionsError(f"{where}: expected an object with id, question, expected")
    missing = [k for k in ("id", "question", "expected") if not item.get(k)]
    if missing:
        raise QuestionsError(f"{where}: missing {', '.join(missing)}")
    lines = item.get("lines")
    if lines is not None:
        if isinstance(lines, str) and "-" in lines:
            lines = lines.split("-", 1)
        try:
            lo, hi = int(lines[0]), int(lines[1])
        except (TypeError, ValueError, IndexError) as exc:
            raise QuestionsError(f"{where}: lines must be [first, last] or 'first-last'") from exc
        if not 1 <= lo <= hi:
            raise QuestionsError(f"{where}: lines must be [first, last] with 1 <= first <= last (got {lo}, {hi})")
        lines = (lo, hi)
    also = item.get("also_ok") or ()
    if isinstance(also, str):
        also = tuple(a for a in also.split("|") if a)
    return Question(
        str(item["id"]),
        str(item["question"]),
        str(item["expected"]),
        str(item.get("snippet") or ""),
        lines,
        tuple(also),
        str(item.get("kind") or ""),
    )


def load_questions(path: str | Path) -> list[Question]:
    """Questions from JSONL (one object a line) or CSV (a header row with the same field names)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise QuestionsError(f"cannot read {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise QuestionsError(f"{path.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    out: list[Question] = []
    if path.suffix.lower() == ".csv":
        for n, row in enumerate(csv.DictReader(text.splitlines()), start=2):
            out.append(_parse_question(row, f"{path.name}:{n}"))
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise QuestionsError(f"{path.name}:{n}: not valid JSON ({exc.msg})") from exc
            out.append(_parse_question(item, f"{path.name}:{n}"))
    if not out:
        raise QuestionsError(f"{path.name} holds no questions")
    ids = [q.id for q in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise QuestionsError(f"{path.name}: duplicate ids: {', '.join(dupes[:5])}")
    return out


@dataclass
class QuestionResult:
    question: Question
    rank: int | None  # rank of the first correct chunk (1-based), None if not in the top `depth`
    top_path: str = ""  # what ranked first instead
    top_heading: str = ""
    error: str = ""  # e.g. the expected note does not exist


@dataclass
class EvalReport:
    """Aggregates over answerable questions, with per-kind breakdowns and per-question detail."""

    config: dict[str, Any]
    results: list[QuestionResult] = field(default_factory=list)

    @property
    def answerable(self) -> list[QuestionResult]:
        return [r for r in self.results if not r.error]

    def _of_kind(self, kind: str | None) -> list[QuestionResult]:
        return [r for r in self.answerable if kind is None or r.question.kind == kind]

    def hit_at(self, k: int, kind: str | None = None) -> float:
        """Share of questions whose right chunk is in the top k."""
        rs = self._of_kind(kind)
        return sum(1 for r in rs if r.rank is not None and r.rank <= k) / len(rs) if rs else 0.0

    def metrics(self, kind: str | None = None) -> dict[str, float]:
        rs = self._of_kind(kind)
        m: dict[str, float] = {"n": len(rs)}
        for k in HIT_KS:
            m[f"hit@{k}"] = self.hit_at(k, kind)
        m["mrr"] = sum(1 / r.rank for r in rs if r.rank) / len(rs) if rs else 0.0
        return m

    def kinds(self) -> list[str]:
        return sorted({r.question.kind for r in self.answerable if r.question.kind})

    def table(self, **labels: Any) -> list[dict[str, Any]]:
        """Table rows: all questions (kind "all"), then one row per kind, each starting with `labels`."""
        rows = [{**labels, "kind": "all", **self.metrics()}]
        return rows + [{**labels, "kind": kind, **self.metrics(kind)} for kind in self.kinds()]

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "metrics": self.metrics(),
            "by_kind": {k: self.metrics(k) for k in self.kinds()},
            "problems": [{"id": r.question.id, "error": r.error} for r in self.results if r.error],
            "questions": [
                {
                    "id": r.question.id,
                    "kind": r.question.kind,
                    "rank": r.rank,
                    "expected": r.question.expected,
                    "top_path": r.top_path,
                    "top_heading": r.top_heading,
                }
                for r in self.answerable
            ],
        }


def chunk_matches(lib: IndexReader, chunk_id: int, q: Question) -> bool:
    """Whether the chunk answers `q`: of its note (or one also accepted), within its lines, holding
    its snippet (white space and case aside)."""
    c = lib.chunk(chunk_id)
    if c.path in q.also_ok:
        return True
    if c.path != q.expected:
        return False
    if q.lines is not None and (c.end_line < q.lines[0] or c.start_line > q.lines[1]):
        return False
    if q.snippet and " ".join(q.snippet.split()).casefold() not in " ".join(c.text.split()).casefold():
        return False
    return True


def evaluate(
    lib: IndexReader,
    questions: list[Question],
    params: SearchParams | None = None,
    embedder: Any = None,
    *,
    depth: int = EVAL_DEPTH,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> EvalReport:
    """Rank each question under `params` (to `depth`, whatever its k; dense and hybrid need
    `embedder`) and record where the first correct chunk landed."""
    params = replace(params or SearchParams(), k=depth)
    note_paths = set(lib.note_paths)
    config: dict[str, Any] = {
        "mode": params.mode,
        "analyzer": params.analyzer.key,
        "k1": params.k1,
        "b": params.b,
        "chunking": lib.settings.chunk.key,
    }
    if params.mode.uses_meaning:
        config["fusion"] = params.fusion
        if params.group is not None:
            config["group"] = params.group
    report = EvalReport(config)
    for i, q in enumerate(questions):
        if cancelled is not None and cancelled():
            break
        if q.expected not in note_paths:
            report.results.append(QuestionResult(q, None, error=f"expected note not found: {q.expected}"))
            continue
        result = lib.search(q.question, params, explain=False, embedder=embedder)
        rank = next((h.rank for h in result.hits if chunk_matches(lib, h.chunk_id, q)), None)
        top = result.hits[0] if result.hits else None
        report.results.append(QuestionResult(q, rank, top.path if top else "", top.heading if top else ""))
        if progress is not None:
            progress(i + 1, len(questions))
    return report


# ---- experiments shared by `ragdesk eval --sweep` and the Evaluate dialog --------------------
def _stepper(progress: Progress | None, per_step: int, total: int) -> Callable[[int], Progress | None]:
    """Progress callbacks for step i of a multi-step experiment, counting questions overall."""
    if progress is None:
        return lambda _i: None
    return lambda i: lambda done, _n: progress(i * per_step + done, total)


def compare_analyzers(
    lib: IndexReader,
    questions: list[Question],
    params: SearchParams | None = None,
    embedder: Any = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> list[dict[str, Any]]:
    """One row per analyzer and kind ("all" first): n, Hit@k, MRR; `params` with each analyzer in turn."""
    params = params or SearchParams()
    step = _stepper(progress, len(questions), len(questions) * len(ANALYZERS))
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(ANALYZERS):
        each = replace(params, analyzer=params.analyzer.with_name(name))
        report = evaluate(lib, questions, each, embedder, progress=step(i), cancelled=cancelled)
        if cancelled is not None and cancelled():
            break
        rows += report.table(analyzer=name)
    return rows


def chunk_sweep(
    lib: IndexReader,
    questions: list[Question],
    params: SearchParams | None = None,
    budget_words: int = 320,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> list[dict[str, Any]]:
    """The context-budget experiment: how often the answer reaches a `budget_words` context filled by
    chunks of 20..320 words (16 x 20 .. 1 x 320), without and with a quarter overlap.

    Each size is indexed into a throwaway folder, so the library's own index is untouched; BM25 ranks
    (`params`' analyzer, k1 and b), as a throwaway index has no meaning index.
    """
    params = replace(params or SearchParams(), mode=Mode.BM25)
    base = lib.settings
    step = _stepper(progress, len(questions), len(questions) * len(CHUNK_SIZES) * 2)
    rows: list[dict[str, Any]] = []
    for i, (size, overlap) in enumerate((s, o) for s in CHUNK_SIZES for o in (0, s // 4)):
        if cancelled is not None and cancelled():
            break
        k = max(1, budget_words // size)
        settings = IndexSettings(base.load, dataclasses.replace(base.chunk, size=size, overlap=overlap))
        with tempfile.TemporaryDirectory(prefix="ragdesk-sweep-") as tmp:
            try:
                sized, _ = build_index(lib.folder, tmp, settings, cancelled=cancelled)
            except BuildCancelled:
                break
            report = evaluate(sized, questions, params, progress=step(i), cancelled=cancelled)
        if cancelled is not None and cancelled():
            break
        m = report.metrics()
        rows.append(
            {
                "chunk_words": size,
                "chunks_in_budget": k,
                "overlap": overlap,
                "answer_in_context": report.hit_at(k),
                "mrr": m["mrr"],
            }
        )
    return rows


def param_grid(
    lib: IndexReader,
    questions: list[Question],
    params: SearchParams | None = None,
    k1s: tuple[float, ...] = GRID_K1,
    bs: tuple[float, ...] = GRID_B,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> list[dict[str, Any]]:
    """MRR and Hit@5 for every (k1, b) cell, BM25 with `params`' analyzer: how sensitive this
    collection is to the BM25 parameters."""
    params = replace(params or SearchParams(), mode=Mode.BM25)
    cells = [(k1, b) for k1 in k1s for b in bs]
    step = _stepper(progress, len(questions), len(questions) * len(cells))
    rows: list[dict[str, Any]] = []
    for i, (k1, b) in enumerate(cells):
        report = evaluate(lib, questions, replace(params, k1=k1, b=b), progress=step(i), cancelled=cancelled)
        if cancelled is not None and cancelled():
            break
        rows.append({"k1": k1, "b": b, "mrr": report.metrics()["mrr"], "hit@5": report.hit_at(5)})
    return rows


# ---- BEIR ------------------------------------------------------------------------------------
def load_beir(folder: str | Path, split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """(queries of the split, qrels: query id -> {doc id: grade}) from a BEIR folder."""
    folder = Path(folder)
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if n == 1 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            if len(parts) < 3:
                raise QuestionsError(f"qrels/{split}.tsv:{n}: expected query-id, corpus-id, score")
            qrels[parts[0]][parts[1]] = int(parts[2])
    queries: dict[str, str] = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line)
            if item["_id"] in qrels:
                queries[item["_id"]] = item["text"]
    return queries, dict(qrels)


def ndcg(ranked: list[str], grades: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded gains (2^g - 1) and log2 discounts, as in trec_eval / BEIR."""
    dcg = sum((2 ** grades.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def rank_documents(
    lib: IndexReader, query: str, params: SearchParams, embedder: Any = None, k: int = 10, depth: int = 200
) -> list[str]:
    """The first `k` notes ranked by their best chunk among the top `depth` (dense and hybrid need
    `embedder`); a note's id is its file name without the extension."""
    result = lib.search(query, replace(params, k=depth), explain=False, embedder=embedder)
    seen: dict[str, None] = {}
    for h in result.hits:
        seen.setdefault(Path(h.path).stem, None)
        if len(seen) >= k:
            break
    return list(seen)


def evaluate_beir(
    lib: IndexReader,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    params: SearchParams | None = None,
    embedder: Any = None,
) -> dict[str, float]:
    """Mean nDCG@k (k: `params.k`) and Recall@100 over the queries (document level; see rank_documents)."""
    params = params or SearchParams()
    k = params.k
    total, recall = 0.0, 0.0
    for qid, text in queries.items():
        ranked = rank_documents(lib, text, params, embedder, 100)
        total += ndcg(ranked, qrels[qid], k)
        rel = {d for d, g in qrels[qid].items() if g > 0}
        recall += len(rel & set(ranked[:100])) / len(rel) if rel else 0.0
    n = len(queries) or 1
    return {f"ndcg@{k}": total / n, "recall@100": recall / n, "n": len(queries)}
