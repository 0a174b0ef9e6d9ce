"""What the window says, as pure functions from core results to HTML and plain lines.

Kept apart from the widgets so each sentence is tested on its own (escaping included) and the panes
only place the text; everything here is computed from values, nothing reads a widget.
"""

from __future__ import annotations

import html
import time

from ..core.explain import TermRow, ordinal
from ..core.injection import Finding
from ..core.jobs import EmbeddingProgress
from ..core.paths import shown
from ..core.prompt import Prompt
from ..core.reader import IndexReader
from ..core.results import Hit, SearchResult
from ..core.secrets import mask
from .delegates import swatch
from .highlight import highlighted_html, term_color

NO_SELECTION = "Select a result to see its text and why it ranked."
NOT_DERIVED = -1  # a rank not looked up: that analyzer's index of a large folder is not derived yet
STALE_MARK = " — ✎ changed on disk since indexing (F5 to refresh)"


REVEAL_SECRETS = "Reveal secrets"
REVEAL_TIP = (
    "This chunk holds a key, token or password, shown as •••. Reveal shows it here for this chunk only;\n"
    "the prompt stays redacted unless “Include secrets in this copy” is ticked."
)


def chunk_title_html(hit: Hit, stale: bool) -> str:
    """The selected result's note, heading trail, location, score and the note's date, in one line."""
    heading = f" › {html.escape(shown(hit.heading))}" if hit.heading else ""
    date = f" · {hit.date_text}" if hit.date_text else ""
    return (
        f"<b>{html.escape(hit.shown_path)}</b>{heading} · {hit.location} · score {hit.score:.3f}{date}"
        f"{STALE_MARK if stale else ''}"
    )


def searched_as_text(result: SearchResult) -> str:
    """The "Searched as" line: the query's words, phrases, exclusions and filters in words, and what
    did not parse; "" for a question without operators."""
    q = result.parsed
    if q is None:
        return ""
    lines = [f"{problem}: searched as words" for problem in q.problems]
    if q.searched_as():
        lines.insert(0, "Searched as: " + q.searched_as() + (" (newest first)" if result.listed else ""))
    return "\n".join(lines)


def chunk_body_html(text: str, spans: list[tuple[int, int, str]], findings: list[Finding], context: list[str]) -> str:
    """The chunk's whole text with matched terms coloured, after a warning when it holds
    instruction-like text and the title and headings indexed with it."""
    warn = ""
    if findings:
        warn = (
            "<p style='background:#fff3cd;padding:4px'>⚠ This chunk contains instruction-like text ("
            + html.escape(findings[0].reason)
            + "). It is quoted as data in the prompt.</p>"
        )
    also = ""
    if context:
        also = (
            "<p style='color:#666'>Also indexed with this chunk (title and headings): "
            + html.escape(" › ".join(context))
            + "</p>"
        )
    body = highlighted_html(text, spans).replace("\n", "<br>")
    return warn + also + f"<div style='font-family:monospace'>{body}</div>"


def fusion_html(mode: str, hit: Hit) -> str:
    """How a fused (dense or hybrid) score was made: in words first, then the formula filled in."""
    assert hit.fusion is not None
    words = html.escape(hit.fusion.in_words(mode))
    formula = html.escape(hit.fusion.describe())
    return (
        f"<b>{html.escape(mode)}</b>: {words}<br><span style='color:#555'>{formula}</span>"
        "<br>The BM25 breakdown of this chunk is below."
    )


def stats_text(hit: Hit, result: SearchResult) -> str:
    """The numbers every row of the breakdown shares, and what the rows sum to."""
    bm25 = sum(r.contribution for r in hit.explain)  # what the rows sum to, in every mode
    fused = f" (the {result.mode} score {hit.score:.4f} is explained above)" if hit.fusion is not None else ""
    return (
        f"|D| = {hit.length} tokens · avgdl = {result.avgdl:.2f} · N = {result.n_docs} chunks · "
        f"k1 = {result.k1:g} · b = {result.b:g} · BM25 score = Σ contributions = {bm25:.3f}{fused}"
    )


def formula_html(row: TermRow, n_docs: int) -> str:
    """One term's contribution with the BM25 formula written out, then filled in."""
    return (
        f"{swatch(term_color(row.term))} <b>{html.escape(row.term)}</b>: contribution = idf · f · (k1 + 1) / "
        f"(f + k1 · (1 − b + b · |D| / avgdl)) → {html.escape(row.formula)}<br>"
        f"idf = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)) = ln(1 + ({n_docs} − {row.n_t} + 0.5) / ({row.n_t} + 0.5))"
        f" = {row.idf:.3f}"
    )


def ranks_text(ranks: dict[str, int | None]) -> str:
    """Where the selected chunk ranks under each analyzer (None: no match; NOT_DERIVED: not looked up)."""
    parts = [
        f"{name}: {'not indexed yet' if rank == NOT_DERIVED else ordinal(rank) if rank else 'no match'}"
        for name, rank in ranks.items()
    ]
    return "Rank under each analyzer — " + " · ".join(parts)


def compare_text(selected: Hit | None, pinned: Hit, result: SearchResult | None = None) -> str:
    """The line above the compare table: what is pinned and, with another selected, their BM25 sums
    (the rows compared; a fused score is never set against a BM25 one) and, in a fused mode, their
    places in the list."""
    where = f"{html.escape(mask(pinned.shown_path))} :{pinned.start_line}"
    if selected is None or selected.chunk_id == pinned.chunk_id:
        return f"◆ Pinned: {where}. Select another result to compare."
    mine, theirs = sum(r.contribution for r in selected.explain), sum(r.contribution for r in pinned.explain)
    line = f"BM25: selected {mine:.3f} vs ◆ pinned {where} {theirs:.3f} ({mine - theirs:+.3f})"
    if result is not None and result.mode.uses_meaning:
        at = next((h.rank for h in result.hits if h.chunk_id == pinned.chunk_id), None)
        place = ordinal(at) if at else f"not in the first {len(result.hits)}"
        line += f" · in the {result.mode} list: selected {ordinal(selected.rank)}, pinned {place}"
    return line


def compare_rows(selected: Hit, pinned: Hit) -> list[tuple[TermRow, float]]:
    """Each of the selected hit's rows beside the pinned hit's contribution for the same row label,
    the largest difference first (ties in the selected rows' order)."""
    pinned_rows = {r.label: r.contribution for r in pinned.explain}
    rows = [(r, pinned_rows.get(r.label, 0.0)) for r in selected.explain]
    return sorted(rows, key=lambda rp: -abs(rp[0].contribution - rp[1]))


def index_status_text(library: IndexReader) -> str:
    """The status bar's summary of the open index: files, chunks, when built, what was skipped."""
    n_skip = sum(1 for s in library.skipped if not s.loaded)
    n_dec = len(library.skipped) - n_skip
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(library.built_at))
    text = f"{len(library.notes)} files · {library.n_chunks} chunks · built {built}"
    if library.skipped:
        text += f" · {n_skip} skipped" + (f", {n_dec} re-decoded" if n_dec else "")
    return text


def welcome_text(query: str) -> str:
    """The first start's line above the sample notes' results."""
    return (
        "Welcome! These are ragdesk's sample notes. Try a question such as "
        f"“{query}”. Select a result to see why it ranked (right), "
        "and press Copy prompt (Ctrl+Shift+C) to paste a ready prompt into your chat assistant."
    )


def no_notes_text(extensions: tuple[str, ...], other_files: int, skipped: int) -> str:
    """For a folder with no notes: what was looked for and how many other files were passed over."""
    shown_exts = ", ".join(extensions[:4]) + (", …" if len(extensions) > 4 else "")
    text = f"No notes found in this folder (looked for {shown_exts}; {other_files:,} other files ignored"
    text += f", {skipped} note files skipped: click the status bar)" if skipped else ")"
    return text + ". Open another folder with Ctrl+O, or change the note types in Settings (Ctrl+,)."


def no_results_text(result: SearchResult) -> str:
    """Why the list is empty: an empty query, or the engine's reason."""
    if not result.query.strip():
        return "Type a question or some words to search your notes."
    return f"No results: {result.reason or 'no chunk matches'}."


def prompt_info_text(prompt: Prompt, secrets_allowed: bool, ticked: int = 0, unticked: int = 0) -> str:
    """The line under the preview: size, what the budget cut or left out, the results ticked in and
    unticked out by hand, what was flagged and what was redacted."""
    info = f"{prompt.summary()} ({prompt.estimator})"
    if budget := prompt.budget_note():
        info += " · " + budget
    if ticked:
        info += f" · {ticked} ticked in by you"
    if unticked:
        info += f" · {unticked} unticked by you"
    if prompt.joined:
        info += f" · {prompt.joined} result(s) joined to the overlapping excerpt of their note"
    for n, findings in prompt.flagged:
        info += f" · ⚠ [{n}] has instruction-like text ({findings[0].reason}); it is quoted as data"
    if prompt.secrets:
        where = prompt.secret_places()
        state = "included in this copy" if secrets_allowed else "redacted"
        info += f" · {len(prompt.secrets)} secret(s) {state} ({where})"
    return info


def copied_text(prompt: Prompt | None, secrets_allowed: bool) -> str:
    """The status line after Copy prompt."""
    summary = prompt.summary() if prompt else ""
    if prompt is not None and prompt.secrets:
        summary += f", {len(prompt.secrets)} secret(s) {'included' if secrets_allowed else 'redacted'}"
    return f"Copied prompt: {summary}"


def meaning_progress_text(msg: EmbeddingProgress) -> str:
    """The status line while the meaning index is computed: chunks so far of all, time left, and what
    searching does meanwhile (see core.modes)."""
    return msg.line() + " (newest notes first; hybrid searches them)"
