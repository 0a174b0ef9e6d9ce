"""`ragdesk mcp` as an assistant uses it: the server started by the SDK's client over stdio, then
search_notes timed warm on til-notes (the questions of tests/data/questions/til-notes-en.jsonl, each
asked twice: the first time its query is embedded, the second from the cache, as an assistant asking
again). The server's start (spawn, imports, the index opened, the model loaded, initialize) is timed
apart, and each call is timed at the client: the protocol's round trip included.

    python tests/benchmarks/bench_mcp.py [--index-dir DIR] [--rounds 3]

With --index-dir, til-notes' index there (and its meaning index: hybrid as the window); else the
per-user cache's, built first when missing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parents[2]
FOLDER = HERE.parent / "shared" / "data" / "til-notes"
QUESTIONS = HERE / "tests" / "data" / "questions" / "til-notes-en.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index-dir")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not FOLDER.is_dir():
        raise SystemExit(f"needs {FOLDER}")
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    extra = ["--index-dir", args.index_dir] if args.index_dir else []
    params = StdioServerParameters(command=sys.executable, args=["-m", "ragdesk", "mcp", str(FOLDER), *extra])
    timings: dict[str, list[float]] = {"start": [], "first": [], "again": [], "read_note": []}
    mode = ""

    async def run() -> None:
        nonlocal mode
        t0 = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            timings["start"].append(time.perf_counter() - t0)
            for q in questions:
                for key in ("first", "again"):
                    t = time.perf_counter()
                    result = await session.call_tool("search_notes", {"query": q, "k": 10})
                    timings[key].append(time.perf_counter() - t)
                    assert not result.is_error, result.content[0].text
                    mode = result.content[0].text.split("—", 1)[1].split("(", 1)[0].strip()
            t = time.perf_counter()
            await session.call_tool("read_note", {"path": "jbranchaud-til/git/renaming-a-branch.md"})
            timings["read_note"].append(time.perf_counter() - t)

    for _ in range(args.rounds):
        anyio.run(run)
    ms = {k: sorted(v) for k, v in timings.items()}

    def p(xs: list[float], q: float) -> float:
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000

    print(f"til-notes, {len(questions)} questions x {args.rounds} server starts; {mode}")
    print("| what | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    print(f"| server start (spawn, index, model, initialize) | {statistics.median(ms['start']) * 1000:.0f} | — |")
    print(f"| search_notes, k=10, query new | {p(ms['first'], 0.5):.1f} | {p(ms['first'], 0.95):.1f} |")
    print(f"| search_notes, k=10, asked again | {p(ms['again'], 0.5):.1f} | {p(ms['again'], 0.95):.1f} |")
    print(f"| read_note | {p(ms['read_note'], 0.5):.1f} | — |")


if __name__ == "__main__":
    main()
