"""Rendering notes into PDFs for tests and benchmarks (fpdf2, a DejaVu font for Czech and Cyrillic).

Each page gets what real documents have: a running header, a footer with the page number, and the
note's text in the body, so the extraction's clean-up is exercised.
"""

from __future__ import annotations

import warnings
from pathlib import Path

FONT_PATHS = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"),
    Path("/IndexReader/Fonts/DejaVuSans.ttf"),
)


def unicode_font() -> Path | None:
    return next((p for p in FONT_PATHS if p.is_file()), None)


def render_pdf(text: str, out: Path, header: str = "Collected notes", title: str | None = None) -> int:
    """Write `text` (Markdown is printed as it is) to `out` as a PDF; returns its page count."""
    import logging

    from fpdf import FPDF

    logging.getLogger("fpdf").setLevel(logging.ERROR)  # glyphs DejaVu lacks (emoji, CJK) are left out, quietly

    font = unicode_font()
    if font is None:
        raise FileNotFoundError("no DejaVuSans.ttf for rendering Unicode text")

    class Doc(FPDF):
        def header(self) -> None:
            self.set_font("dv", size=8)
            self.cell(0, 6, header, align="C")
            self.ln(8)

        def footer(self) -> None:
            self.set_y(-12)
            self.set_font("dv", size=8)
            self.cell(0, 6, f"Page {self.page_no()} of {{nb}}", align="C")

    with warnings.catch_warnings():  # fpdf2 2.8.5+ notes that it corrected A5's size
        warnings.simplefilter("ignore", UserWarning)
        doc = Doc(format="A5")
    doc.add_font("dv", fname=str(font))
    doc.set_auto_page_break(True, margin=16)
    doc.add_page()
    doc.set_font("dv", size=10)
    if title:
        doc.set_title(title)
    for paragraph in text.split("\n"):
        doc.multi_cell(0, 5, paragraph if paragraph.strip() else " ", new_x="LMARGIN", new_y="NEXT")
    out.parent.mkdir(parents=True, exist_ok=True)
    doc.output(str(out))
    return doc.page_no()
