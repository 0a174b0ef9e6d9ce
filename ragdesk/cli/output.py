"""What the commands print for a person (their --json is built in commands.py)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from ..core.paths import shown, visible_controls


class VisibleControls:
    """A text stream that writes control characters as visible text (ESC as the six characters
    `\\u001b`; those in `keep` as they are): what the commands print never drives the terminal."""

    def __init__(self, stream: Any, keep: str = "\t\n") -> None:
        self._stream = stream
        self._keep = keep

    def write(self, text: str) -> int:
        return self._stream.write(visible_controls(text, self._keep))

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding… as the stream's
        return getattr(self._stream, name)


def say_meaning_waiting() -> None:
    print("ragdesk: waiting for another process computing this folder's meaning index…", file=sys.stderr)


def meaning_line(m: dict[str, Any]) -> str:
    if m["complete"]:
        return f"meaning index ({m['model']}): complete, {m['embedded_now']} chunks embedded in {m['seconds']:.1f} s"
    return f"meaning index ({m['model']}): {m['embedded']} of {m['chunks']} chunks ({m['reason']})"


def print_report(rows: list[dict[str, Any]]) -> None:
    """The index report as a table: status, chunks, tokens, pages, path, and why for the others."""
    counts = {status: sum(1 for r in rows if r["status"] == status) for status in ("indexed", "decoded", "skipped")}
    print(", ".join(f"{n} {status}" for status, n in counts.items()))
    print(f"{'status':8} {'chunks':>6} {'tokens':>8} {'pages':>5}  path")
    for r in rows:
        pages = "" if r["pages"] is None else str(r["pages"])
        line = f"{r['status']:8} {r['chunks']:>6} {r['tokens']:>8} {pages:>5}  {r['path']}"
        print(line + (f"  ({r['reason']})" if r["reason"] else ""))


def say_waiting() -> None:
    print("ragdesk: waiting for another ragdesk process to finish indexing this folder…", file=sys.stderr)


def terminal_progress() -> Any:
    """A progress line on stderr when it is a terminal (scripts and pipes get no noise)."""
    if not sys.stderr.isatty():
        return None
    last = [0.0]

    def show(done: int, total: int, chunks: int, current: str) -> None:
        now = time.monotonic()
        if done == total or now - last[0] > 0.1:
            last[0] = now
            print(f"\r{done}/{total} files, {chunks} chunks  ", end="", file=sys.stderr, flush=True)

    return show


def _as_is(text: str) -> str:
    return text


def print_hits(result: Any, explain: bool, scrub: Any = None) -> None:
    """The ranked hits for a person; `scrub` (a secrets.Scrubber) redacts secrets in what is printed."""
    from ..core.explain import explanation_text
    from ..core.languages import dropped_text

    clean = scrub.text if scrub is not None else _as_is
    if result.reason:
        print(f"({result.reason})")
    if result.left_out.dropped:
        print(f"({dropped_text(result.left_out)})")
    parsed = result.parsed
    if parsed is not None:
        for problem in parsed.problems:
            print(f"({problem}: searched as words)")
        if parsed.searched_as():
            print(clean(f"(searched as: {parsed.searched_as()})"))
    for h in result.hits:
        where = f"{h.shown_path}" + (f" › p. {h.page}" if h.page else f":{h.start_line}-{h.end_line}")
        where += f" › {shown(h.heading)}" if h.heading else ""
        snippet = " ".join(clean(h.text).split())[:160]  # redacted before it is cut, so no half key shows
        score = f"{h.date_text:>10}" if result.listed else f"{h.score:8.4g}"  # filters only: newest first
        score += f"  {h.date_text}" if result.sort == "newest" and not result.listed else ""
        print(f"{h.rank:>3}. {score}  {clean(where)}\n       {snippet}")
        if h.fusion is not None:
            print(f"       {result.mode}: {h.fusion.describe()}")
        if explain:
            bm25 = sum(r.contribution for r in h.explain)  # the BM25 part, beneath a fused score
            lines = explanation_text(h.explain, bm25).split("\n")
            print("\n".join("       " + clean(line) for line in lines))
    print(
        f"N = {result.n_docs}, avgdl = {result.avgdl:.2f}, mode = {result.mode}, analyzer = {result.analyzer}, "
        f"k1 = {result.k1:g}, b = {result.b:g}, {result.took_ms:.1f} ms"
    )
    if result.mode_reason:
        print(f"mode: {result.mode_reason}")


def print_why_not(why: Any, scrub: Any = None) -> None:
    clean = scrub.text if scrub is not None else _as_is
    print(f"\nWhy not {clean(shown(why.path))}? {why.summary()}")
    names, rows = why.rank_table()
    print(f"  {'':22}" + "".join(f"{n:>14}" for n in names))
    for label, values in rows:
        print(f"  {label:22}" + "".join(f"{v:>14}" for v in values))
    top = {r.label: r for r in why.top_terms}
    print(f"  {'term':24} {'n_t':>6} {'idf':>7} {'f':>4} {'contribution':>12} {'top hit':>8}")
    for r in why.terms:
        other = top.get(r.label)
        print(
            f"  {clean(r.label)[:24]:24} {r.n_t:>6} {r.idf:>7.3f} {r.f:>4} {r.contribution:>12.3f} "
            f"{(other.contribution if other else 0.0):>8.3f}"
        )
    if why.missing_terms:
        print("  missing: " + ", ".join(clean(t) for t in why.missing_terms))


def print_rows(rows: list[dict[str, Any]], as_json: bool, title: str) -> int:
    if as_json:
        print(json.dumps({"title": title, "rows": rows}, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("(nothing to report)")
        return 0
    cols = list(rows[0])
    print(f"{title}\n")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in (row.get(c, "") for c in cols)]
        print("| " + " | ".join(cells) + " |")
    return 0
