"""Painting helpers: stacked per-term contribution bars, share bars, and rich-text snippets.

Paint paths read the models' Python objects directly (`ResultsModel.hit_at`, `BreakdownModel.row_at`)
instead of `index.data(role)`: PySide6 6.12.0 drops a reference to None on every Python-side
`index.data()` whose answer is None, which kills Python 3.10/3.11 after minutes of repainting.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QFont, QFontMetrics, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from .highlight import term_color
from .models import BreakdownModel, ResultsModel

Index = QModelIndex | QPersistentModelIndex


class ContributionBarDelegate(QStyledItemDelegate):
    """A stacked bar of a hit's per-term contributions, scaled to the best score in the list."""

    def __init__(self, max_score: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self._max_score = max_score  # callable returning the top score

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        super().paint(painter, option, index)
        model = index.model()
        hit = model.hit_at(index.row()) if isinstance(model, ResultsModel) else None
        rows = hit.explain if hit is not None else []
        top = self._max_score() or 1.0
        rect = option.rect.adjusted(3, 5, -3, -5)
        x = float(rect.left())
        painter.save()
        for r in rows:
            if r.contribution <= 0:
                continue
            w = rect.width() * r.contribution / top
            painter.fillRect(QRectF(x, rect.top(), w, rect.height()), term_color(r.term).darker(115))
            x += w
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(120, 22)


class ShareBarDelegate(QStyledItemDelegate):
    """A horizontal bar for a breakdown row's share of the score, with the percentage on top."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        row = model.row_at(index.row()) if isinstance(model, BreakdownModel) else None
        if row is None:
            super().paint(painter, option, index)
            return
        share = model.share(row)
        painter.save()
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(option.rect, option.palette.highlight())
        bar = option.rect.adjusted(2, 4, -2, -4)
        bar.setWidth(int(bar.width() * share))
        painter.fillRect(bar, term_color(row.term).darker(110))
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        painter.drawText(
            option.rect.adjusted(4, 0, -4, 0),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            f"{share:.1%}",
        )
        painter.restore()


class HtmlDelegate(QStyledItemDelegate):
    """Renders a result: the note and heading trail in bold on one line (elided in the middle), then
    the highlighted passage wrapped to the cell's width and clipped to its height."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        row = index.row()
        passage = model.passage_html(row) if isinstance(model, ResultsModel) else None
        if passage is None:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_color = opt.palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        rect = opt.rect.adjusted(4, 2, -4, -2)
        bold = QFont(opt.font)
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        title = fit_title(model.title_parts(row), rect.width(), metrics)
        painter.save()
        painter.setClipRect(opt.rect)
        painter.setFont(bold)
        painter.setPen(text_color)
        painter.drawText(rect.left(), rect.top() + metrics.ascent(), title)
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(opt.font)
        doc.setHtml(passage)
        doc.setTextWidth(max(40, rect.width()))
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.ColorRole.Text, text_color)
        painter.translate(rect.left(), rect.top() + metrics.lineSpacing() + 2)
        doc.documentLayout().draw(painter, ctx)
        painter.restore()


# What a narrow title gives up first: the note's date (whole), the folder (its end kept: the nearest
# folder), then the heading trail (its start kept), last the file name (its middle): the name and its
# page or line stay.
SHORTEN = (("folder", Qt.TextElideMode.ElideLeft), ("heading", Qt.TextElideMode.ElideRight))


def fit_title(parts: list[tuple[str, str]], width: int, metrics: QFontMetrics) -> str:
    """The title from `parts` (ResultsModel.title_parts) in `width` pixels: whole when it fits, else
    shortened part by part as SHORTEN says, else with the file name elided in the middle."""
    pieces = list(parts)
    if metrics.horizontalAdvance("".join(t for t, _ in pieces)) > width:  # the note's date goes first, whole
        pieces = [(t, part) for t, part in pieces if part != "date"]
    for shorten, mode in (*SHORTEN, ("name", Qt.TextElideMode.ElideMiddle)):
        if metrics.horizontalAdvance("".join(t for t, _ in pieces)) <= width:
            break
        others = sum(metrics.horizontalAdvance(t) for t, part in pieces if part != shorten)
        room = max(0, width - others)
        pieces = [(metrics.elidedText(t, mode, room) if part == shorten else t, part) for t, part in pieces]
    return "".join(t for t, _ in pieces)


def swatch(color: QColor) -> str:
    return f'<span style="background-color:{color.name()}">&nbsp;&nbsp;&nbsp;</span>'
