"""Qt item models over core results: the ranked hits and one hit's per-term breakdown (their terms'
colours and highlighted passages come from `highlight`)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from ..core.explain import TermRow
from ..core.injection import Finding, describe
from ..core.paths import shown
from ..core.results import Hit, SearchResult
from .highlight import SNIPPET_CHARS, highlighted_html, set_query_terms, term_color

HitRole = Qt.ItemDataRole.UserRole + 1
RowsRole = Qt.ItemDataRole.UserRole + 2  # list[TermRow] of a hit (for the contribution bar)
HtmlRole = Qt.ItemDataRole.UserRole + 3  # rich text for the snippet delegate
ShareRole = Qt.ItemDataRole.UserRole + 4  # float in [0, 1] for a breakdown bar

Index = QModelIndex | QPersistentModelIndex
SECRET_MARK = "••• "  # a result whose secrets are shown masked (a glyph every font has)
SECRET_TIP = "Holds a key, token or password, shown as •••; select it and click “Reveal secrets” to see it."
PIN_MARK = "◆ "  # the row pinned for compare (a glyph every font has)


class _TableModel(QAbstractTableModel):
    """A flat table over a Python list: one row per item, columns named by COLUMNS."""

    COLUMNS: tuple[str, ...] = ()
    COLUMN_TIPS: tuple[str, ...] = ()  # a header's tooltip: what the column holds, in a line

    def _items(self) -> list[Any]:
        raise NotImplementedError

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._items())

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self.COLUMN_TIPS):
            return self.COLUMN_TIPS[section]
        return None


class ResultsModel(_TableModel):
    """Ranked chunks: include-in-prompt checkbox, rank, score, source, snippet, contribution bar."""

    COLUMNS = ("Use", "#", "Score", "Note › heading", "Why", "Result")
    COLUMN_TIPS = (
        "Ticked results go into the prompt; untick one to leave it out",
        "The result's rank in this list",
        "BM25: the sum of its terms' contributions; hybrid: the fused score; meaning: the cosine (scales differ)",
        "The note and the headings the chunk sits under",
        "Each query term's BM25 contribution, coloured as in the text, scaled to the top score",
        "The note › headings, then the chunk with the query's terms highlighted",
    )
    COL_USE, COL_RANK, COL_SCORE, COL_SOURCE, COL_BAR, COL_SNIPPET = range(6)
    inclusion_changed = Signal()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.result: SearchResult | None = None
        self.hits: list[Hit] = []  # the rows shown
        self.all_hits: list[Hit] = []  # every hit of the result, in rank order
        self.grouped = False
        self.folded: dict[int, int] = {}  # grouped: chunk id shown -> how many more chunks of its note
        self.highlights: dict[int, list[tuple[int, int, str]]] = {}
        self.stale: set[int] = set()
        self.excluded: set[tuple[str, int, int]] = set()  # passages the user unticked (Hit.key: path, span)
        self.ticked: set[tuple[str, int, int]] = set()  # passages the user ticked in, beyond the top k
        self.in_prompt: set[int] = set()  # the ranks of the results the prompt holds: what Use shows
        self.pinned_key: tuple[str, int, int] | None = None  # the passage pinned for compare: marked ◆
        self.findings: dict[int, list[Finding]] = {}  # chunk id -> instruction-like passages
        self.masked: dict[int, Hit] = {}  # chunk id -> the hit with its secrets as •, shown until revealed
        self.revealed: set[int] = set()  # chunks whose secrets the person chose to see
        self._max_bm25 = 1.0

    def set_grouped(self, grouped: bool) -> None:
        """Group results by note: each note once, at its best chunk's place, its other chunks folded
        beneath it (counted in the source column; the prompt takes what is shown)."""
        if grouped == self.grouped:
            return
        self.beginResetModel()
        self.grouped = grouped
        self._layout()
        self.endResetModel()

    def _layout(self) -> None:
        # chunks the search itself folded (dense and hybrid group by note), then what grouping here folds
        self.folded = {h.chunk_id: len(h.folded) for h in self.all_hits if h.folded}
        if not self.grouped:
            self.hits = list(self.all_hits)
            return
        firsts: dict[str, Hit] = {}
        for h in self.all_hits:
            if h.path in firsts:
                self.folded[firsts[h.path].chunk_id] = self.folded.get(firsts[h.path].chunk_id, 0) + 1
            else:
                firsts[h.path] = h
        self.hits = list(firsts.values())

    def set_result(
        self,
        result: SearchResult,
        highlights: dict[int, list[tuple[int, int, str]]],
        stale: set[int],
        findings: dict[int, list[Finding]],
        masked: dict[int, Hit] | None = None,
    ) -> None:
        """Show a result; `findings` (chunk id -> instruction-like passages) and `masked` (chunk id -> the
        hit with its secrets masked) were found by the search worker, off the GUI thread."""
        self.beginResetModel()
        set_query_terms([t.term for t in result.terms])
        self.result = result
        self.all_hits = list(result.hits)
        self._layout()
        self.highlights = highlights
        self.stale = stale
        self.findings = findings
        self.masked, self.revealed = masked or {}, set()
        self._max_bm25 = max((sum(r.contribution for r in h.explain) for h in self.hits), default=0.0) or 1.0
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self.result, self.hits, self.highlights, self.stale, self.findings = None, [], {}, set(), {}
        self.in_prompt = set()
        self.masked, self.revealed = {}, set()
        self.all_hits, self.folded = [], {}
        self.endResetModel()

    def max_bm25_score(self) -> float:
        """The largest BM25 sum among the hits (scales the contribution bars in every mode)."""
        return self._max_bm25

    def hit_at(self, row: int) -> Hit | None:
        """The hit shown in `row` (None outside the list); what paint paths and the window read."""
        return self.hits[row] if 0 <= row < len(self.hits) else None

    def shown(self, hit: Hit) -> Hit:
        """`hit` as the window shows it: its secrets masked unless revealed for this chunk."""
        masked = self.masked.get(hit.chunk_id)
        return hit if masked is None or hit.chunk_id in self.revealed else masked

    def is_masked(self, hit: Hit) -> bool:
        return hit.chunk_id in self.masked and hit.chunk_id not in self.revealed

    def reveal(self, chunk_id: int) -> None:
        """Show this chunk's secrets as they are (for this result only: a new search masks them again)."""
        self.revealed.add(chunk_id)
        row = next((i for i, h in enumerate(self.hits) if h.chunk_id == chunk_id), None)
        if row is not None:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))

    def title_text(self, row: int) -> str:
        """A result's first line: the note and its heading trail (and marks, page, folded chunks)."""
        return "".join(text for text, _ in self.title_parts(row))

    def title_parts(self, row: int) -> list[tuple[str, str]]:
        """The title line in pieces, each with its part ("mark", "folder", "name", "where", "heading",
        "more"), so that a narrow view shortens the folder first, then the heading trail, and keeps the
        file name with its page or line (delegates.fit_title)."""
        hit = self.hit_at(row)
        if hit is None:
            return []
        marks = PIN_MARK if hit.key == self.pinned_key else ""
        marks += ("⚠ " if hit.chunk_id in self.findings else "") + ("✎ " if hit.chunk_id in self.stale else "")
        marks += SECRET_MARK if self.is_masked(hit) else ""
        hit = self.shown(hit)
        folder, slash, name = hit.shown_path.rpartition("/")
        heading = f" › {shown(hit.heading)}" if hit.heading else ""
        more = self.folded.get(hit.chunk_id, 0)
        parts = [(marks, "mark"), (folder + slash, "folder"), (name, "name")]
        if hit.page is not None:  # a PDF: cited by page
            parts += [(f" › p. {hit.page}", "where"), (heading, "heading")]
        else:
            parts += [(heading, "heading"), (f" :{hit.start_line}", "where")]
        parts.append((f"  (+{more} more in this note)" if more else "", "more"))
        if hit.date_text:  # the note's date, given up first when the row is narrow (delegates.fit_title)
            parts.append((f"  · {hit.date_text}", "date"))
        return [(text, part) for text, part in parts if text]

    def passage_html(self, row: int) -> str | None:
        """The passage of the row's chunk that holds the most query terms, highlighted in their colours."""
        hit = self.hit_at(row)
        if hit is None:
            return None
        return highlighted_html(self.shown(hit).text, self.highlights.get(hit.chunk_id, []), SNIPPET_CHARS)

    def snippet_html(self, row: int) -> str | None:
        """A result as a person reads it: the title line in bold, then the passage."""
        passage = self.passage_html(row)
        return None if passage is None else f"<b>{html.escape(self.title_text(row))}</b><br>{passage}"

    def included_hits(self) -> list[Hit]:
        """The results the prompt may take (not unticked), in rank order; see `ticked_keys`."""
        return [h for h in self.hits if h.key not in self.excluded]

    def set_in_prompt(self, ranks: set[int]) -> None:
        """Tick Use on exactly the results the prompt holds (the prompt pane decides, this shows it)."""
        if ranks != self.in_prompt:
            self.in_prompt = ranks
            if self.hits:
                last = self.index(len(self.hits) - 1, self.COL_USE)
                self.dataChanged.emit(self.index(0, self.COL_USE), last, [Qt.ItemDataRole.CheckStateRole])

    def forget_ticks(self) -> None:
        """A new question: the passages ticked in for the last one go (unticked ones stay out)."""
        self.ticked.clear()

    def set_pinned(self, hit: Hit | None) -> None:
        """Mark the pinned passage's row (◆ before its title)."""
        self.pinned_key = hit.key if hit is not None else None
        if self.hits:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.hits) - 1, len(self.COLUMNS) - 1))

    def unticked_count(self) -> int:
        """How many shown results the person unticked (kept out of the prompt)."""
        return len(self.excluded & {h.key for h in self.hits})

    def _items(self) -> list[Any]:
        return self.hits

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        f = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == self.COL_USE:
            f |= Qt.ItemFlag.ItemIsUserCheckable
        return f

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.hits):
            return None
        hit = self.hits[index.row()]
        col = index.column()
        if role == HitRole:
            return hit
        if role == RowsRole:
            return hit.explain
        if role == Qt.ItemDataRole.CheckStateRole and col == self.COL_USE:
            return Qt.CheckState.Checked if hit.rank in self.in_prompt else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            if col == self.COL_RANK:
                return hit.rank
            if col == self.COL_SCORE:
                return f"{hit.score:.4f}" if hit.fusion is not None else f"{hit.score:.3f}"
            if col == self.COL_SOURCE:
                return self.title_text(index.row())
            if col == self.COL_SNIPPET:
                return " ".join(self.shown(hit).text.split())[:300]
        if role == HtmlRole and col == self.COL_SNIPPET:
            return self.snippet_html(index.row())
        if role == Qt.ItemDataRole.ToolTipRole:
            tips = []
            if hit.chunk_id in self.stale:
                tips.append("This note changed on disk since it was indexed; refresh (F5) to update.")
            if hit.chunk_id in self.findings:
                tips.append("Instruction-like text: " + describe(self.findings[hit.chunk_id]))
            if self.is_masked(hit):
                tips.append(SECRET_TIP)
            if hit.key == self.pinned_key:
                tips.append("Pinned for compare (Ctrl+P unpins it): select another result to compare.")
            if col == self.COL_BAR:
                tips.append(", ".join(f"{r.term}: {r.contribution:.3f}" for r in hit.explain if r.contribution))
            return "\n".join(tips) or None
        if role == Qt.ItemDataRole.ForegroundRole and col == self.COL_SOURCE and hit.chunk_id in self.stale:
            return QBrush(QColor("#a15c00"))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (self.COL_RANK, self.COL_SCORE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or index.column() != self.COL_USE or role != Qt.ItemDataRole.CheckStateRole:
            return False
        key = self.hits[index.row()].key
        if Qt.CheckState(value) == Qt.CheckState.Checked:  # in, beyond the top k or the budget if need be
            self.excluded.discard(key)
            self.ticked.add(key)
        else:
            self.ticked.discard(key)
            self.excluded.add(key)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        self.inclusion_changed.emit()
        return True


class BreakdownModel(_TableModel):
    """One hit's BM25 breakdown: a row per distinct query term (absent terms shown and marked)."""

    COLUMNS = ("Term", "From query words", "n_t", "idf", "f", "Contribution", "Share")
    COLUMN_TIPS = (
        "The term searched for: a word, a 5-letter stem or a 3-letter piece (trigram), as the analyzer cuts it",
        "The words of the query this term comes from",
        "n_t: how many chunks of the index hold the term (the fewer, the more it weighs)",
        "idf: the term's weight from its rarity; select a row to see the formula filled in below",
        "f: how many times the term occurs in this chunk",
        "The term's part of this chunk's BM25 score: idf, f and the chunk's length (filled in below)",
        "The contribution as a share of the chunk's BM25 score",
    )
    COL_TERM, COL_WORDS, COL_NT, COL_IDF, COL_F, COL_CONTRIB, COL_SHARE = range(7)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[TermRow] = []
        self.score = 0.0

    def set_rows(self, rows: list[TermRow]) -> None:
        """Biggest contribution first; terms that contributed nothing (absent, not in index) last."""
        self.beginResetModel()
        self.rows = sorted(rows, key=lambda r: -r.contribution)  # stable: query order among equals
        self.score = sum(r.contribution for r in rows)
        self.endResetModel()

    def _items(self) -> list[Any]:
        return self.rows

    def row_at(self, row: int) -> TermRow | None:
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def share(self, row: TermRow) -> float:
        """A row's share of the sum of contributions (0 when nothing contributed)."""
        return row.contribution / self.score if self.score else 0.0

    def display(self, r: TermRow, col: int) -> str | int | None:
        """What a cell shows (its DisplayRole)."""
        if col == self.COL_TERM:
            return r.label
        if col == self.COL_WORDS:
            return ", ".join(r.words)
        if col == self.COL_NT:
            return r.n_t if r.in_index else "0 (no note)"
        if col == self.COL_IDF:
            return f"{r.idf:.3f}"
        if col == self.COL_F:
            return r.f if r.f or not r.in_index else "0 (absent)"
        if col == self.COL_CONTRIB:
            return f"{r.contribution:.3f}"
        if col == self.COL_SHARE:
            return f"{self.share(r):.1%}"
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        r = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.display(r, col)
        if role == ShareRole and col == self.COL_SHARE:
            return self.share(r)
        if role == Qt.ItemDataRole.DecorationRole and col == self.COL_TERM:
            return term_color(r.term)
        if role == Qt.ItemDataRole.ForegroundRole and r.contribution == 0:
            return QBrush(QColor("#888888"))
        if role == Qt.ItemDataRole.ToolTipRole:
            where = "" if r.in_index else "In no note of the index. " if not r.n_t else ""
            where = where or ("Not in this chunk. " if not r.f else "")
            return where + r.formula
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= self.COL_NT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
