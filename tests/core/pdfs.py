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


def render_folder(src: Path, out: Path, header: str) -> int:
    """Every .md of `src` as a PDF of the same relative path (suffix .pdf); returns the page count."""
    pages = 0
    for md in sorted(src.rglob("*.md")):
        rel = md.relative_to(src).with_suffix(".pdf")
        pages += render_pdf(md.read_text(encoding="utf-8"), out / rel, header=header)
    return pages


def cmap_pdf(entries: int) -> bytes:
    """A one-page PDF whose font's /ToUnicode map has `entries` mappings (a few KB compressed, tens of
    MB of parsing for a reader): what made one 143 KB file take 1.65 GB to read."""
    import zlib

    lines = [
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def",
        b"1 begincodespacerange <0000> <FFFF> endcodespacerange",
    ]
    pairs = b"".join(b"<%04X> <%04X>\n" % (i % 65536, 0x41 + i % 26) for i in range(100))
    chunk = b"100 beginbfchar\n" + pairs + b"endbfchar\n"
    lines.append(chunk * (entries // 100))
    lines.append(b"endcmap CMapName currentdict /CMap defineresource pop end end")
    cmap = zlib.compress(b"\n".join(lines), 9)
    content = zlib.compress(b"BT /F1 12 Tf 10 10 Td <00010002> Tj ET")
    objs = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>",
        b"<</Length %d/Filter/FlateDecode>>stream\n" % len(content) + content + b"\nendstream",
        b"<</Type/Font/Subtype/Type0/BaseFont/X/Encoding/Identity-H/ToUnicode 6 0 R/DescendantFonts[7 0 R]>>",
        b"<</Length %d/Filter/FlateDecode>>stream\n" % len(cmap) + cmap + b"\nendstream",
        b"<</Type/Font/Subtype/CIDFontType2/BaseFont/X"
        b"/CIDSystemInfo<</Registry(Adobe)/Ordering(Identity)/Supplement 0>>>>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out
