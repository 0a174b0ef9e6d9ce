"""PDFs: extraction speed, the refresh cost of unchanged PDFs, and whether questions find the same
notes in PDF form as in Markdown form (and what the clean-up of running lines is worth).

    python tests/benchmarks/bench_pdf.py [--langs en,cs,uk] [--refresh-pdfs 500]

1. Throughput: every PDF of ../shared/data/pdf-samples read in this process, pages per second.
2. Refresh: a folder of N rendered PDFs (and a few notes) indexed, one note edited, refreshed.
3. Quality: the Obsidian help in each language rendered page for page into PDFs (A5, a running
   header and "Page N of M" footers, as real documents have), indexed as PDFs with and without the
   clean-up, and as Markdown; the question sets of tests/data/questions answered on each (Hit@5, MRR).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ragdesk.core import evaluate as ev  # noqa: E402
from ragdesk.core import pdf  # noqa: E402
from ragdesk.core.build import build_index  # noqa: E402
from tests.core.pdfs import render_folder, render_pdf  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
QUESTIONS = ROOT / "tests" / "data" / "questions"


def throughput() -> None:
    files = sorted((SHARED / "pdf-samples").rglob("*.pdf"))
    pages = 0
    t0 = time.perf_counter()
    for f in files:
        try:
            pages += pdf.extract(f.read_bytes()).pages
        except ValueError:
            pass
    took = time.perf_counter() - t0
    print(f"extraction: {len(files)} sample PDFs, {pages} pages with text in {took:.2f} s = {pages / took:.0f} pages/s")


def refresh_cost(work: Path, n: int) -> None:
    folder = work / "refresh"
    src = SHARED / "obsidian-help" / "en"
    mds = sorted(src.rglob("*.md"))
    t0 = time.perf_counter()
    for i in range(n):
        render_pdf(mds[i % len(mds)].read_text(encoding="utf-8"), folder / f"doc{i:04d}.pdf", header="Docs")
    (folder / "note.md").write_text("# A note\n\nfirst version\n", encoding="utf-8")
    print(f"refresh: rendered {n} PDFs in {time.perf_counter() - t0:.0f} s")
    _, full = build_index(folder, work / "refresh-idx")
    (folder / "note.md").write_text("# A note\n\nsecond version\n", encoding="utf-8")
    _, again = build_index(folder, work / "refresh-idx")
    print(
        f"refresh: full build of {n} PDFs + 1 note {full.elapsed_s:.2f} s; after editing the note "
        f"{again.elapsed_s:.2f} s ({again.changed} changed, {again.unchanged} unchanged: no PDF read again)"
    )


def quality(work: Path, langs: list[str]) -> None:
    print("\n| set | Markdown | PDF (clean-up) | PDF (no clean-up) |\n|---|---:|---:|---:|")
    totals: dict[str, list[float]] = {"md": [], "pdf": [], "raw": []}
    for lang in langs:
        src = SHARED / "obsidian-help" / lang
        questions_md = ev.load_questions(QUESTIONS / f"obsidian-help-{lang}.jsonl")
        questions_pdf = work / f"q-{lang}.jsonl"
        with open(questions_pdf, "w", encoding="utf-8") as fh:
            for q in questions_md:
                item = {"id": q.id, "question": q.question, "expected": str(Path(q.expected).with_suffix(".pdf"))}
                item |= {"kind": q.kind, "also_ok": "|".join(str(Path(a).with_suffix(".pdf")) for a in q.also_ok)}
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
        pdfs = work / f"pdf-{lang}"
        t0 = time.perf_counter()
        pages = render_folder(src, pdfs, header=f"Obsidian Help ({lang})")
        print(f"  ({lang}: rendered {pages} pages in {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        row = []
        for name, folder, questions, clean in (
            ("md", src, questions_md, True),
            ("pdf", pdfs, ev.load_questions(questions_pdf), True),
            ("raw", pdfs, ev.load_questions(questions_pdf), False),
        ):
            real = pdf._drop_running_lines
            if not clean:
                pdf._drop_running_lines = lambda pages: (pages, 0)  # type: ignore[assignment]
            try:
                lib, _ = build_index(folder, work / f"idx-{lang}-{name}", reuse_stored=False)
            finally:
                pdf._drop_running_lines = real  # type: ignore[assignment]
            m = ev.evaluate(lib, questions).metrics()
            totals[name].append(m["hit@5"])
            totals[name + "_mrr"] = totals.get(name + "_mrr", []) + [m["mrr"]]
            row.append(f"{m['hit@5']:.3f} / {m['mrr']:.3f}")
        print(f"| obsidian-help-{lang} | " + " | ".join(row) + " |")
    mean = [
        f"{sum(totals[k]) / len(totals[k]):.3f} / {sum(totals[k + '_mrr']) / len(totals[k]):.3f}"
        for k in ("md", "pdf", "raw")
    ]
    print("| **mean** | " + " | ".join(mean) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="en,cs,uk")
    parser.add_argument("--refresh-pdfs", type=int, default=500)
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"needs {SHARED}", file=sys.stderr)
        return 2
    throughput()
    work = Path(tempfile.mkdtemp(prefix="ragdesk-pdf-"))
    try:
        refresh_cost(work, args.refresh_pdfs)
        quality(work, args.langs.split(","))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
