"""Accents: the eight question sets asked as written and as typed without diacritics ("zlutoucky" for
"žluťoučký"), with the default analyzer and with accents folded (in the index and the query).

    python tests/benchmarks/accents.py

Prints Hit@5 / MRR per set for each of the four combinations, and the means.
"""

from __future__ import annotations

import sys
import tempfile
import unicodedata
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ragdesk.core import evaluate as ev  # noqa: E402
from ragdesk.core.analyzers import AnalyzerConfig  # noqa: E402
from ragdesk.core.build import build_index  # noqa: E402
from ragdesk.core.params import SearchParams  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
SETS = {
    "til-notes-en": "til-notes",
    "tldr-pages-cs": "tldr-pages/pages.cs",
    "naucse-python-cs": "naucse-python-cs",
    "obsidian-help-en": "obsidian-help/en",
    "obsidian-help-cs": "obsidian-help/cs",
    "obsidian-help-fr": "obsidian-help/fr",
    "obsidian-help-it": "obsidian-help/it",
    "obsidian-help-uk": "obsidian-help/uk",
}


def strip_accents(text: str) -> str:
    """What a person types without diacritics: combining marks dropped (Cyrillic letters stay)."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def main() -> int:
    plain, folded = AnalyzerConfig(), AnalyzerConfig(fold_accents=True)
    cols = [("as written", plain, False), ("as written, folded", folded, False)]
    cols += [("no diacritics", plain, True), ("no diacritics, folded", folded, True)]
    print("| set | " + " | ".join(c[0] for c in cols) + " |\n|---|" + "---:|" * len(cols))
    sums = [[0.0, 0.0] for _ in cols]
    with tempfile.TemporaryDirectory() as tmp:
        for name, folder in SETS.items():
            questions = ev.load_questions(ROOT / "tests" / "data" / "questions" / f"{name}.jsonl")
            stripped = [replace(q, question=strip_accents(q.question)) for q in questions]
            lib, _ = build_index(SHARED / folder, Path(tmp) / name)
            row = []
            for i, (_, cfg, strip) in enumerate(cols):
                m = ev.evaluate(lib, stripped if strip else questions, SearchParams(cfg)).metrics()
                sums[i][0] += m["hit@5"]
                sums[i][1] += m["mrr"]
                row.append(f"{m['hit@5']:.3f} / {m['mrr']:.3f}")
            print(f"| {name} | " + " | ".join(row) + " |", flush=True)
    n = len(SETS)
    print("| **mean** | " + " | ".join(f"{h / n:.3f} / {r / n:.3f}" for h, r in sums) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
