"""Compare retrieval recipes on every question set in tests/data/questions (Hit@5, MRR).

Each set is evaluated twice: note level (a chunk of the expected note counts, like the
held-out set) and chunk level (the chunk must also contain the question's snippet).
Run: python tests/benchmarks/tune_defaults.py [--configs seed,default,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

from ragdesk.core import evaluate as ev
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.chunking import ChunkOptions
from ragdesk.core.params import IndexSettings, SearchParams

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE.parent / "data" / "questions"
DATA = HERE.parents[2] / "shared" / "data"
SETS = {  # question file -> notes folder under ../shared/data
    "til-notes-en": "til-notes",
    "tldr-pages-cs": "tldr-pages/pages.cs",
    "naucse-python-cs": "naucse-python-cs",
    **{f"obsidian-help-{lang}": f"obsidian-help/{lang}" for lang in ("en", "cs", "fr", "it", "uk")},
}
INDEX_ROOT = Path.home() / ".cache" / "ragdesk-tune"  # the sets' indexes with their meaning rows (hours to compute)


def set_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options every script over the sets' kept indexes takes: --sets, --index-root, --json."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--index-root", type=Path, default=INDEX_ROOT)
    p.add_argument("--json", action="store_true")
    return p


# name -> (chunk options, analyzer, k1, b)
CONFIGS: dict[str, tuple[ChunkOptions, AnalyzerConfig, float, float]] = {
    "seed": (ChunkOptions("words", 80, 0, False), AnalyzerConfig("stems"), 1.2, 0.75),
    "seed+overlap": (ChunkOptions("words", 80, 20, False), AnalyzerConfig("stems"), 1.2, 0.75),
    "default": (ChunkOptions(), AnalyzerConfig(), 1.2, 0.75),
}


def note_level(q: ev.Question) -> ev.Question:
    return dataclasses.replace(q, snippet="", lines=None)


def run(names: list[str]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for set_name, folder in SETS.items():
        questions = ev.load_questions(QUESTIONS / f"{set_name}.jsonl")
        for name in names:
            chunk, analyzer, k1, b = CONFIGS[name]
            with tempfile.TemporaryDirectory(prefix="ragdesk-tune-") as tmp:
                lib, _ = build_index(DATA / folder, tmp, IndexSettings(chunk=chunk))
                params = SearchParams(analyzer, k1, b)
                notes = ev.evaluate(lib, [note_level(q) for q in questions], params)
                chunks = ev.evaluate(lib, questions, params)
            for level, rep in (("note", notes), ("chunk", chunks)):
                m = rep.metrics()
                rows.append(
                    {
                        "set": set_name,
                        "config": name,
                        "level": level,
                        "hit@5": m["hit@5"],
                        "mrr": m["mrr"],
                        "para_hit@5": rep.hit_at(5, "paraphrase"),
                        "direct_hit@5": rep.hit_at(5, "direct"),
                    }
                )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not DATA.is_dir():
        print(f"needs {DATA}", file=sys.stderr)
        return 2
    names = args.configs.split(",")
    rows = run(names)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for level in ("note", "chunk"):
        print(f"\n{level} level: Hit@5 / MRR")
        print(f"{'set':20}" + "".join(f"{n:>22}" for n in names))
        for set_name in [*SETS, "mean"]:
            cells = []
            for n in names:
                rs = [r for r in rows if r["config"] == n and r["level"] == level and set_name in (r["set"], "mean")]
                h = sum(r["hit@5"] for r in rs) / len(rs)
                m = sum(r["mrr"] for r in rs) / len(rs)
                cells.append(f"{h:.3f} / {m:.3f}".rjust(22))
            print(f"{set_name:20}" + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
