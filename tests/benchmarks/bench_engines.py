"""Benchmark ragdesk against bm25s, rank_bm25 and tantivy on the same files, in one run.

Each engine runs in its own process (so peak memory is its own) over the same notes:
ragdesk reads, chunks and indexes the folder itself; the peers get the same files read
and cut into 80-word windows by this harness (that time is counted in their build).

    python tests/benchmarks/bench_engines.py [--corpus til|scale|both] [--engines ragdesk,bm25s,...]

Needs the bench extra for the peers: pip install -e ".[bench]". Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
DATA = HERE.parents[3] / "shared" / "data"
CORPORA = {
    "til": (DATA / "til-notes", (".md",)),
    "scale": (DATA, (".md", ".texy")),
}
ENGINES = ("ragdesk", "bm25s", "rank_bm25", "tantivy")
WORD = re.compile(r"\w+")
# tantivy's writer memory: what a bulk indexer of ~100 MB would give it (a smaller heap flushes and
# merges more segments, which slowed its builds by up to 2x in the earlier 200 MB runs)
TANTIVY_HEAP = 500_000_000


N_CLAIMS = 300  # queries() starts with the long SciFact claims; the short note titles follow


def queries(n_titles: int = 200) -> list[str]:
    """300 SciFact test claims plus note titles from the multilingual sets (same for every engine)."""
    out = [json.loads(line)["text"] for line in open(DATA / "beir-scifact" / "queries.test.jsonl", encoding="utf-8")]
    titles = sorted(p.stem.replace("-", " ") for p in (DATA / "obsidian-help").rglob("*.md"))
    step = max(1, len(titles) // n_titles)
    return out + titles[::step][:n_titles]


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (Linux /proc)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            total = next((int(x.split()[1]) * 1024 for x in fh if x.startswith("VmRSS:")), 0)
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            kids = [int(c) for c in fh.read().split()]
    except OSError:
        return total
    return total + sum(tree_rss(k) for k in kids)


class PeakMemory:
    """Samples the resident memory of this process and its workers together, every 20 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, tree_rss(os.getpid()))

    def mb(self) -> float:
        return max(self.peak, tree_rss(os.getpid())) / 2**20


MEMORY: PeakMemory | None = None


def peak_mb() -> float:
    """Peak resident memory of the engine's process tree so far (workers counted while they run)."""
    return MEMORY.mb() if MEMORY is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def note_files(folder: Path, exts: tuple[str, ...]) -> list[Path]:
    """The peers' files: those with one of `exts`, hidden folders left out (as ragdesk does)."""
    return [
        path
        for path in sorted(p for p in folder.rglob("*") if p.suffix in exts and p.is_file())
        if not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]


def windows(folder: Path, exts: tuple[str, ...], size: int = 80, overlap: int = 20) -> list[str]:
    """The peers' input: every note cut into `size`-word windows (the seed's recipe)."""
    texts = []
    for path in note_files(folder, exts):
        words = path.read_bytes().decode("utf-8", "replace").split()
        for i in range(0, max(len(words) - overlap, 1), size - overlap):
            texts.append(" ".join(words[i : i + size]))
    return texts


def whole_files(folder: Path, exts: tuple[str, ...]) -> list[str]:
    """Every note's text as one document (tantivy's floor: nothing cut, nothing counted)."""
    return [path.read_bytes().decode("utf-8", "replace") for path in note_files(folder, exts)]


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def time_queries(fn, qs: list[str]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    for q in qs[:5]:
        fn(q)  # warm up
    ts = []
    for q in qs:
        t0 = time.perf_counter()
        fn(q)
        ts.append((time.perf_counter() - t0) * 1000)
    out = {"p50_ms": statistics.median(ts), "p95_ms": percentile(ts, 95)}
    if len(ts) > N_CLAIMS:  # the short queries a person types (2-6 words), on their own
        out["short_p50_ms"] = statistics.median(ts[N_CLAIMS:])
    return out


def run_ragdesk(folder: Path, exts: tuple[str, ...], qs: list[str]) -> dict[str, float]:
    sys.path.insert(0, str(HERE.parents[2]))
    from ragdesk.core.analyzers import AnalyzerConfig
    from ragdesk.core.build import build_index
    from ragdesk.core.loader import LoadOptions
    from ragdesk.core.params import IndexSettings
    from ragdesk.core.reader import IndexReader

    tmp = Path(tempfile.mkdtemp(prefix="ragdesk-bench-"))
    try:
        notes = tmp / "notes"  # a private copy, so one note can be edited for the incremental figure
        shutil.copytree(folder, notes, ignore=shutil.ignore_patterns(".*"))
        index_dir = tmp / "index"
        t0 = time.perf_counter()
        # as the app's build process and the CLI build: with the default analyzer's indexes
        lib, report = build_index(notes, index_dir, IndexSettings(LoadOptions(extensions=exts)), warm=AnalyzerConfig())
        build = time.perf_counter() - t0
        out: dict[str, float] = {"build_s": build, "chunks": report.chunks, "build_peak_mb": peak_mb()}
        t0 = time.perf_counter()
        reopened = IndexReader.open(notes, index_dir)
        reopened.search(qs[0], analyzer=AnalyzerConfig(), k=10)
        out["reopen_first_query_s"] = time.perf_counter() - t0
        for name in ("stems", "combined"):
            cfg = AnalyzerConfig(name)
            lib.warm(cfg)
            r = time_queries(lambda q, c=cfg: lib.search(q, analyzer=c, k=10, explain=False), qs)
            out[f"{name}_p50_ms"], out[f"{name}_p95_ms"] = r["p50_ms"], r["p95_ms"]
            out[f"{name}_short_p50_ms"] = r["short_p50_ms"]
            r = time_queries(lambda q, c=cfg: lib.search(q, analyzer=c, k=10, explain=True), qs)
            out[f"{name}_explain_p50_ms"], out[f"{name}_explain_p95_ms"] = r["p50_ms"], r["p95_ms"]
        note = notes / lib.notes[len(lib.notes) // 2].path
        note.write_text(note.read_text(encoding="utf-8") + "\nan edit: zyxwvut\n", encoding="utf-8")
        t0 = time.perf_counter()
        settings = IndexSettings(LoadOptions(extensions=exts))
        lib, _ = build_index(notes, index_dir, settings, previous=lib, warm=AnalyzerConfig())
        found = [
            h for h in lib.search("zyxwvut", analyzer=AnalyzerConfig()).hits if h.path == str(note.relative_to(notes))
        ]
        out["incremental_s"] = time.perf_counter() - t0 if found else float("nan")
        out["index_mb"] = sum(f.stat().st_size for f in index_dir.rglob("*") if f.is_file()) / 1e6
        out["peak_mb"] = peak_mb()  # before the measuring process below, which is not part of the engine
        out["loaded_mb"] = loaded_rss_mb(notes, index_dir, qs[0])
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def loaded_rss_mb(notes: Path, index_dir: Path, query: str) -> float:
    """Resident memory of a fresh process that opens the index and answers one default query."""
    code = (
        "import sys; from ragdesk.core.reader import IndexReader; from ragdesk.core.analyzers import AnalyzerConfig; "
        "lib = IndexReader.open(sys.argv[1], sys.argv[2]); lib.search(sys.argv[3], analyzer=AnalyzerConfig(), k=10); "
        "print(next(int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmRSS:')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(notes), str(index_dir), query], capture_output=True, text=True, check=True
    )
    return int(proc.stdout.split()[-1]) / 1024


def run_bm25s(folder: Path, exts: tuple[str, ...], qs: list[str]) -> dict[str, float]:
    import bm25s

    t0 = time.perf_counter()
    texts = windows(folder, exts)
    tokens = bm25s.tokenize(texts, stopwords=None, show_progress=False)
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(tokens, show_progress=False)
    build = time.perf_counter() - t0

    def query(q: str) -> object:
        qt = bm25s.tokenize([q], stopwords=None, show_progress=False)
        if not len(qt.vocab):
            return None
        return retriever.retrieve(qt, k=min(10, len(texts)), show_progress=False, n_threads=1)

    r = time_queries(query, qs)
    return {"build_s": build, "chunks": len(texts), **r, "peak_mb": peak_mb()}


def run_rank_bm25(folder: Path, exts: tuple[str, ...], qs: list[str]) -> dict[str, float]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    t0 = time.perf_counter()
    texts = windows(folder, exts)
    bm = BM25Okapi([WORD.findall(t.casefold()) for t in texts], k1=1.2, b=0.75)
    build = time.perf_counter() - t0

    def query(q: str) -> object:
        scores = bm.get_scores(WORD.findall(q.casefold()))
        return np.argpartition(-scores, 10)[:10]

    r = time_queries(query, qs[:60])  # it scores every chunk in Python per term: a sample is enough
    return {"build_s": build, "chunks": len(texts), **r, "peak_mb": peak_mb()}


def tantivy_index(texts: list[str], path: str) -> Any:
    """A tantivy index of the windows (one indexing thread), committed and reloaded."""
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False)
    sb.add_integer_field("id", indexed=True)
    index = tantivy.Index(sb.build(), path=path)
    writer = index.writer(heap_size=TANTIVY_HEAP, num_threads=1)
    for i, t in enumerate(texts):
        writer.add_document(tantivy.Document(body=t, id=i))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def tantivy_query(index: Any, searcher: Any, q: str, explain: bool = False) -> object:
    """tantivy's top 10 for the query's words; with `explain`, each hit's score explained too."""
    words = WORD.findall(q)
    if not words:
        return None
    parsed = index.parse_query(" ".join(words), ["body"])
    hits = searcher.search(parsed, 10).hits
    if explain:  # every hit's score explained, as ragdesk does for its top 10
        return [parsed.explain(searcher, addr).to_json() for _, addr in hits]
    return hits


def run_tantivy(folder: Path, exts: tuple[str, ...], qs: list[str]) -> dict[str, float]:
    import tantivy

    tmp = tempfile.mkdtemp(prefix="tantivy-bench-")
    try:
        t0 = time.perf_counter()
        texts = windows(folder, exts)
        index = tantivy_index(texts, tmp)
        searcher = index.searcher()
        build = time.perf_counter() - t0

        def query(q: str, explain: bool = False) -> object:
            return tantivy_query(index, searcher, q, explain)

        r = time_queries(query, qs)
        explained = time_queries(lambda q: query(q, explain=True), qs)
        r["explain_p50_ms"], r["explain_p95_ms"] = explained["p50_ms"], explained["p95_ms"]
        t0 = time.perf_counter()
        index2 = tantivy.Index.open(tmp)
        index2.searcher().search(index2.parse_query(" ".join(WORD.findall(qs[0])), ["body"]), 10)
        reopen = time.perf_counter() - t0
        # One edited window: delete it by id, add the new text, commit, and find it.
        t0 = time.perf_counter()
        doc = len(texts) // 2
        writer = index.writer(heap_size=TANTIVY_HEAP, num_threads=1)
        writer.delete_documents("id", doc)
        writer.add_document(tantivy.Document(body=texts[doc] + " an edit zyxwvut", id=doc))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        found = index.searcher().search(index.parse_query("zyxwvut", ["body"]), 10).hits
        update = time.perf_counter() - t0 if found else float("nan")
        return {
            "build_s": build,
            "chunks": len(texts),
            **r,
            "reopen_first_query_s": reopen,
            "incremental_s": update,
            "index_mb": sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file()) / 1e6,
            "peak_mb": peak_mb(),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


RUNNERS = {"ragdesk": run_ragdesk, "bm25s": run_bm25s, "rank_bm25": run_rank_bm25, "tantivy": run_tantivy}


def child(engine: str, corpus: str) -> None:
    global MEMORY
    MEMORY = PeakMemory()
    folder, exts = CORPORA[corpus]
    result = RUNNERS[engine](folder, exts, queries())
    print("RESULT " + json.dumps(result))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", choices=("til", "scale", "both"), default="both")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    if not DATA.is_dir():
        print(f"needs the shared corpora at {DATA}", file=sys.stderr)
        return 2
    corpora = ["til", "scale"] if args.corpus == "both" else [args.corpus]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; queries: {len(queries())}\n")
    for corpus in corpora:
        print(f"### {corpus}: {CORPORA[corpus][0]}\n")
        print(
            "| engine | chunks | build s | query p50 ms | query p95 ms | short-query p50 ms | reopen + 1st query s "
            "| one-note update s | peak MB | index MB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for engine in args.engines.split(","):
            proc = subprocess.run(
                [sys.executable, str(HERE), "--child", engine, corpus], capture_output=True, text=True, check=False
            )
            line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                print(f"| {engine} | failed: {err} | | | | | | | | |")
                continue
            r = json.loads(line[7:])
            reopen = f"{r['reopen_first_query_s']:.2f}" if "reopen_first_query_s" in r else "n/a"
            if engine == "ragdesk":
                for name in ("stems", "combined"):
                    print(
                        f"| ragdesk ({name}) | {r['chunks']:.0f} | {r['build_s']:.1f} | {r[name + '_p50_ms']:.2f} "
                        f"({r[name + '_explain_p50_ms']:.2f} with explanations) | {r[name + '_p95_ms']:.2f} "
                        f"({r[name + '_explain_p95_ms']:.2f}) | {r[name + '_short_p50_ms']:.2f} | {reopen} "
                        f"| {r['incremental_s']:.2f} "
                        f"| {r['peak_mb']:.0f} (build {r['build_peak_mb']:.0f}) "
                        f"| {r['index_mb']:.0f} (opened: {r['loaded_mb']:.0f} MB resident) |"
                    )
            else:
                update = f"{r['incremental_s']:.2f}" if "incremental_s" in r else "n/a (rebuild)"
                index_mb = f"{r['index_mb']:.0f}" if "index_mb" in r else "n/a (memory)"
                short = f"{r['short_p50_ms']:.2f}" if "short_p50_ms" in r else "n/a"
                p50, p95 = f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}"
                if "explain_p50_ms" in r:
                    p50 += f" ({r['explain_p50_ms']:.2f} with explanations)"
                    p95 += f" ({r['explain_p95_ms']:.2f})"
                print(
                    f"| {engine} | {r['chunks']:.0f} | {r['build_s']:.1f} | {p50} | {p95} "
                    f"| {short} | {reopen} | {update} | {r['peak_mb']:.0f} | {index_mb} |"
                )
            sys.stdout.flush()
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
