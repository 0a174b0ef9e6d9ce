"""Write tests/data/questions/obsidian-help-<lang>.jsonl from obsidian_questions.tsv.

The help vault is translated page for page and keeps the same `permalink:` in every language,
so one question (written in each language) points at the same page everywhere.
    python tests/data/make_obsidian_questions.py [../shared/data/obsidian-help]
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def permalinks(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*.md")):
        m = re.search(r"^permalink:\s*(\S+)\s*$", path.read_text(encoding="utf-8"), re.MULTILINE)
        if m:
            out.setdefault(m.group(1), path.relative_to(folder).as_posix())
    return out


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "data" / "obsidian-help"
    rows = list(csv.DictReader(open(HERE / "obsidian_questions.tsv", encoding="utf-8"), delimiter="\t"))
    langs = [c for c in rows[0] if c not in ("permalink", "kind")]
    (HERE / "questions").mkdir(exist_ok=True)
    for lang in langs:
        links = permalinks(root / lang)
        with open(HERE / "questions" / f"obsidian-help-{lang}.jsonl", "w", encoding="utf-8") as out:
            for n, row in enumerate(rows, start=1):
                item = {
                    "id": f"{lang}-{n:02d}",
                    "question": row[lang],
                    "expected": links[row["permalink"]],
                    "kind": row["kind"],
                }
                out.write(json.dumps(item, ensure_ascii=False) + "\n")
        print(f"{lang}: {len(rows)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
