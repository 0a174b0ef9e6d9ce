"""Every language beside English: the eight question sets with the query's words all searched ("off",
the ranking before core/languages.py), with elided articles left out only, and with the detected
language's stop words left out too ("auto", the default). BM25 and hybrid, note level (a chunk of the
expected note counts), Hit@5 / MRR overall and for paraphrases, per set and per language.

Needs the sets' indexes with complete meaning indexes for hybrid (`python tests/benchmarks/tune_fusion.py
--embed` makes them, resumable); BM25 runs on any. Run: python tests/benchmarks/bench_languages.py
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from pathlib import Path
from unittest import mock

import numpy as np

from ragdesk.core import evaluate as ev
from ragdesk.core import languages
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.dense import load_embedder
from ragdesk.core.params import SearchParams

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_defaults import DATA, QUESTIONS, set_parser  # noqa: E402
from tune_fusion import open_set  # noqa: E402

VARIANTS = ("off", "elision only", "auto")  # before, the first change, both changes (the default)


def language_of(set_name: str) -> str:
    return set_name.rsplit("-", 1)[1]


def run(names: list[str], root: Path, modes: list[str]) -> list[dict[str, object]]:
    emb = load_embedder() if "hybrid" in modes else None
    rows: list[dict[str, object]] = []
    for name in names:
        lib = open_set(name, root, embed=False)
        questions = [
            dataclasses.replace(q, snippet="", lines=None) for q in ev.load_questions(QUESTIONS / f"{name}.jsonl")
        ]
        for mode in modes:
            if mode == "hybrid" and not lib.has_meaning(emb.name):
                print(
                    f"{name}: no complete meaning index (run tune_fusion.py --embed): hybrid skipped", file=sys.stderr
                )
                continue
            for variant in VARIANTS:
                config = AnalyzerConfig(query_language="off" if variant == "off" else "auto")
                undetected = mock.patch.object(languages, "detect_language", lambda _words: None)
                with undetected if variant == "elision only" else contextlib.nullcontext():
                    rep = ev.evaluate(lib, questions, SearchParams(config, mode=mode), emb)
                for part, _ in config.parts():  # each query's filter is memoized: not across variants
                    lib.analyzer(part).query_filter.cache_clear()
                m = rep.metrics()
                rows.append(
                    {
                        "set": name,
                        "language": language_of(name),
                        "mode": mode,
                        "variant": variant,
                        "hit@5": m["hit@5"],
                        "mrr": m["mrr"],
                        "para_hit@5": rep.hit_at(5, "paraphrase"),
                        "para_mrr": rep.metrics("paraphrase")["mrr"],
                        "n": len(questions),
                    }
                )
    return rows


def table(rows: list[dict[str, object]], mode: str, key: str) -> list[str]:
    """Hit@5 / MRR per `key` ("set" or "language"), a column per variant, then the means."""
    mine = [r for r in rows if r["mode"] == mode]
    groups = list(dict.fromkeys(str(r[key]) for r in mine))
    out = [f"| {mode}, {key} | " + " | ".join(VARIANTS) + " |", "|---|" + "---:|" * len(VARIANTS)]

    def cell(rs: list[dict[str, object]]) -> str:
        return f"{np.mean([float(r['hit@5']) for r in rs]):.3f} / {np.mean([float(r['mrr']) for r in rs]):.3f}"

    for g in groups:
        out.append(
            f"| {g} | "
            + " | ".join(cell([r for r in mine if r[key] == g and r["variant"] == v]) for v in VARIANTS)
            + " |"
        )
    means = [[r for r in mine if r["variant"] == v] for v in VARIANTS]
    out.append("| **mean of the sets** | " + " | ".join(f"**{cell(rs)}**" for rs in means) + " |")
    para = [
        f"{np.mean([float(r['para_hit@5']) for r in rs]):.3f} / {np.mean([float(r['para_mrr']) for r in rs]):.3f}"
        for rs in means
    ]
    out.append("| paraphrases | " + " | ".join(para) + " |")
    return out


def main() -> int:
    p = set_parser(__doc__)
    p.add_argument("--modes", default="bm25,hybrid")
    args = p.parse_args()
    if not DATA.is_dir():
        print(f"needs {DATA}", file=sys.stderr)
        return 2
    rows = run(args.sets.split(","), args.index_root, args.modes.split(","))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for mode in args.modes.split(","):
        for key in ("set", "language"):
            print("\n".join(table(rows, mode, key)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
