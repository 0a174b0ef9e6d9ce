"""PDFs in the notes folder: indexed from their text layer, cited by page, never failing silently."""

from __future__ import annotations

import codecs
import json
import shutil
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core import loader, pdf
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.excerpts import Excerpt
from ragdesk.core.prompt import build_prompt

from ..conftest import write_notes
from .pdfs import cmap_pdf, render_pdf, unicode_font

needs_font = pytest.mark.skipif(unicode_font() is None, reason="no DejaVuSans.ttf to render test PDFs")


@pytest.fixture(scope="module")
def samples_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict]]:
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "pdf-samples"
    if not shared.is_dir():
        pytest.skip("../shared/data is not available")
    index = tmp_path_factory.mktemp("pdf") / "idx"
    assert main(["index", str(shared), "--index-dir", str(index), "--report", "--json"]) == 0
    return shared, index, json.loads((shared / "files.json").read_text())["data"]


def test_every_sample_pdf_is_indexed_with_its_pages_or_skipped_with_a_reason(
    samples_index: tuple[Path, Path, list[dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    shared, index, files = samples_index
    assert main(["index", str(shared), "--index-dir", str(index), "--report", "--json"]) == 0
    report = {r["path"]: r for r in json.loads(capsys.readouterr().out)["report"]}
    present = [f for f in files if (shared / f["path"]).is_file()]
    assert len(present) == 31
    indexed = skipped = 0
    for f in present:
        row = report[f["path"]]
        if row["status"] in ("indexed", "decoded"):  # decoded: indexed, with a reason (pages without text)
            indexed += 1
            assert row["pages"] == f["pages"] and row["chunks"] >= 1 and row["tokens"] >= 1, row
        else:
            skipped += 1
            assert row["status"] == "skipped" and row["reason"], row
    assert indexed >= 20
    assert report["005-libreoffice-writer-password/libreoffice-writer-password.pdf"]["reason"].startswith("encrypted")
    assert report["019-grayscale-image/grayscale-image.pdf"]["reason"] == pdf.NO_TEXT
    # its four text pages say only "Background", once taken for a running header: text, not scanned
    assert report["007-imagemagick-images/imagemagick-images.pdf"]["status"] == "decoded"
    assert report["009-pdflatex-geotopo/GeoTopo-komprimiert.pdf"]["pages"] == 117


def test_hits_in_pdfs_carry_their_page_and_outline_heading(
    samples_index: tuple[Path, Path, list[dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    shared, index, _ = samples_index
    assert main(["search", str(shared), "Homotopie von Wegen", "--index-dir", str(index), "--json", "-k", "3"]) == 0
    top = json.loads(capsys.readouterr().out)["hits"][0]
    assert top["path"] == "009-pdflatex-geotopo/GeoTopo-komprimiert.pdf"
    assert top["heading"].endswith("3.1 Homotopie von Wegen") and 40 <= top["page"] <= 60
    assert main(["prompt", str(shared), "Homotopie von Wegen", "--index-dir", str(index), "--json", "-k", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["excerpts"][0]["page"] == top["page"]
    assert f"[1] ({top['path']} › p. {top['page']} › " in data["prompt"]
    assert ", lines " not in data["prompt"].split("[1]")[1].split("\n")[0]  # a PDF is cited by page


def test_cleanup_joins_hyphens_folds_ligatures_and_drops_running_lines() -> None:
    assert pdf.clean_page_text("the informa-\ntion ﬁeld is e\ufb00ective") == "the information field is effective"
    topics = ["rivers", "mountains", "deserts", "forests", "coasts"]
    pages = [f"Annual Report 2024\nOn {t}.\nWhat we saw of {t} this year.\n{i}" for i, t in enumerate(topics, 1)]
    kept, removed = pdf._drop_running_lines(pages)
    assert removed == 10  # the running header and the page number of each page
    assert kept[2] == "On deserts.\nWhat we saw of deserts this year."


@needs_font
def test_rendered_notes_are_found_by_page(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    words = "river stone cloud field harbour lantern meadow orchard valley bridge".split()
    body = "\n".join(f"This paragraph talks about the {a} and the {b}." for a in words for b in words)
    pages = render_pdf(body + "\nThe zanzibar clause is on the last page.", folder / "report.pdf", header="Report")
    write_notes(folder, {"note.md": "# Note\n\nnothing about that clause here\n"})
    lib, built = build_index(folder, tmp_path / "idx", workers=1)
    assert not built.skipped and pages >= 3
    (hit,) = lib.search("zanzibar", analyzer=AnalyzerConfig(), k=1).hits
    assert hit.path == "report.pdf" and hit.page == pages and hit.location == f"p. {pages}"
    assert "Report" not in hit.text and "Page " not in hit.text  # running header and page numbers left out
    excerpt = Excerpt.of(hit)
    assert build_prompt("q", [excerpt]).text.count(f"[1] (report.pdf › p. {pages})") == 1


@needs_font
def test_refresh_never_rereads_an_unchanged_pdf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "notes"
    render_pdf("alpha beta gamma\n" * 20, folder / "a.pdf")
    render_pdf("delta epsilon\n" * 20, folder / "b.pdf")
    write_notes(folder, {"n.md": "a note"})
    build_index(folder, tmp_path / "idx", workers=1)
    read: list[int] = []
    real = pdf.extract
    monkeypatch.setattr(pdf, "extract", lambda data, *a, **kw: read.append(len(data)) or real(data, *a, **kw))
    (folder / "n.md").write_text("an edited note", encoding="utf-8")
    lib, report = build_index(folder, tmp_path / "idx", workers=1)
    assert read == [] and report.changed == 1
    render_pdf("delta epsilon zeta\n" * 20, folder / "b.pdf")
    lib, report = build_index(folder, tmp_path / "idx", workers=1)
    assert len(read) == 1 and report.changed == 1  # the changed PDF alone
    assert lib.search("zeta", analyzer=AnalyzerConfig(), k=1).hits[0].path == "b.pdf"


def test_a_pdf_that_takes_too_long_is_reported_and_the_build_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_data: Path
) -> None:
    folder = write_notes(tmp_path / "notes", {"n.md": "a note about apples"})
    shutil.copy(shared_data / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf", folder / "big.pdf")
    # pypdf's modules imported first: the 0.05 s alarm is to land in its parsing, not in an import (in
    # this process PySide6's import hook reports an exception raised inside it as unraisable)
    pdf.extract((shared_data / "pdf-samples" / "004-pdflatex-4-pages" / "pdflatex-4-pages.pdf").read_bytes())
    monkeypatch.setattr(pdf, "EXTRACT_TIMEOUT_S", 0.05)
    lib, report = build_index(folder, tmp_path / "idx", workers=1)
    assert lib.note_paths == ["n.md"]
    (skip,) = report.skipped
    assert (skip.path, skip.reason) == ("big.pdf", "reading took longer than 0.05 s")


def test_a_timeout_landing_inside_a_codec_keeps_its_message() -> None:
    """Python 3.10/3.11 re-wrap an exception raised inside a codec ("decoding with 'cp1252' codec
    failed (…)") unless its class has its own __init__; the alarm can land in pypdf's decoding."""

    def decode(data: bytes, errors: str = "strict") -> tuple[str, int]:
        raise pdf.ExtractionTimeout(0.05)

    def lookup(name: str) -> codecs.CodecInfo | None:
        return codecs.CodecInfo(None, decode, name="slowcodec") if name == "slowcodec" else None

    codecs.register(lookup)
    try:
        with pytest.raises(pdf.ExtractionTimeout) as caught:
            b"x".decode("slowcodec")
    finally:
        codecs.unregister(lookup)
    assert str(caught.value) == "reading took longer than 0.05 s"


def test_damaged_and_empty_pdfs_are_reported(tmp_path: Path) -> None:
    folder = write_notes(
        tmp_path / "notes",
        {"broken.pdf": b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF", "ok.md": "fine"},
    )
    lib, report = build_index(folder, tmp_path / "idx", workers=1)
    assert lib.note_paths == ["ok.md"]
    (skip,) = report.skipped
    assert skip.path == "broken.pdf" and skip.reason.startswith("damaged PDF: ")


def test_pdfs_are_note_types_by_default() -> None:
    assert ".pdf" in loader.DEFAULT_EXTENSIONS


@needs_font
def test_the_same_questions_find_the_same_notes_as_pdfs(shared_data: Path, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    """The Czech Obsidian help (173 notes) rendered into PDFs with running headers and page numbers:
    its 30 questions find their notes about as often as in Markdown (tests/benchmarks/bench_pdf.py
    reports three languages: mean Hit@5 0.711 on PDFs, 0.722 on Markdown)."""
    from ragdesk.core import evaluate as ev

    from .pdfs import render_folder

    src = shared_data / "obsidian-help" / "cs"
    work = tmp_path_factory.mktemp("pdfq")
    render_folder(src, work / "pdf", header="Nápověda Obsidian")
    questions = ev.load_questions(Path(__file__).parents[1] / "data" / "questions" / "obsidian-help-cs.jsonl")
    as_pdf = work / "q.jsonl"
    as_pdf.write_text(
        "".join(
            json.dumps({"id": q.id, "question": q.question, "expected": str(Path(q.expected).with_suffix(".pdf"))})
            + "\n"
            for q in questions
        ),
        encoding="utf-8",
    )
    md_lib, _ = build_index(src, work / "idx-md")
    pdf_lib, report = build_index(work / "pdf", work / "idx-pdf")
    assert report.files == 173 and not [s for s in report.skipped if not s.loaded]
    md = ev.evaluate(md_lib, questions).metrics()
    on_pdf = ev.evaluate(pdf_lib, ev.load_questions(as_pdf)).metrics()
    assert on_pdf["hit@5"] >= md["hit@5"] - 0.07  # within two questions of thirty
    assert on_pdf["mrr"] >= md["mrr"] - 0.05


def test_the_time_limit_never_fires_inside_an_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module cut half-way by the alarm would stay broken; the alarm waits for its next round."""
    import importlib
    import sys

    (tmp_path / "ragdesk_probe_module.py").write_text(
        "import sys\nfrom ragdesk.core import pdf\nINSIDE = pdf._importing(sys._getframe())\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.import_module("ragdesk_probe_module").INSIDE is True
    assert pdf._importing(sys._getframe()) is False
    sys.modules.pop("ragdesk_probe_module", None)


def test_pages_of_one_layout_keep_their_text() -> None:
    """A statement whose every page has the same few lines (digits aside) is text, not running
    headers: nothing of it is dropped, and it is never called scanned."""
    pages = [
        f"Meter 4471{i:02}\nReading {1200 + i * 37} kWh on 2024-{i:02}-01\nPaid {i * 11}.50 EUR" for i in range(1, 13)
    ]
    kept, removed = pdf._drop_running_lines(pages)
    assert kept == pages and removed == 0
    one_line = [f"Entry {i}: sensor {i * 3} ok" for i in range(5000)]
    kept, removed = pdf._drop_running_lines(one_line)
    assert kept == one_line and removed == 0


@needs_font
def test_a_pdf_whose_pages_share_one_layout_is_searchable(tmp_path: Path) -> None:
    from fpdf import FPDF

    doc = FPDF()
    doc.add_font("dv", fname=str(unicode_font()))
    doc.set_font("dv", size=11)
    for i in range(1, 13):
        doc.add_page()
        for line in (f"Meter 4471{i:02}", f"Reading {1200 + i * 37} kWh", f"Paid {i * 11}.50 EUR"):
            doc.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    data = bytes(doc.output())
    text = pdf.extract(data)
    assert "Reading 1237 kWh" in text.text and text.pages == 12 and text.removed_lines == 0


def test_a_pdf_that_needs_too_much_memory_is_skipped_with_the_reason(tmp_path: Path) -> None:
    """Each extraction may grow the address space by EXTRACT_MEMORY_MB (Linux); past it, and past
    pypdf's own limits, the PDF is skipped with a reason, never a traceback or gigabytes. Run in a
    fresh process: the limit is on growth, and a long-running one reuses memory it freed."""
    import subprocess
    import sys

    with pytest.raises(ValueError, match="cannot be read within pypdf's limits: LimitReachedError"):
        pdf.extract(cmap_pdf(150_000))
    (tmp_path / "big.pdf").write_bytes(cmap_pdf(99_000))  # ~40 MB to parse, within pypdf's limits
    (tmp_path / "small.pdf").write_bytes(cmap_pdf(100))
    script = (
        "import resource, sys\n"
        "from ragdesk.core import pdf\n"
        "pdf.EXTRACT_MEMORY_MB = 16\n"
        "soft = resource.getrlimit(resource.RLIMIT_AS)\n"
        "try:\n"
        "    pdf.extract(open(sys.argv[1], 'rb').read())\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
        "assert resource.getrlimit(resource.RLIMIT_AS) == soft\n"
        "print(pdf.extract(open(sys.argv[2], 'rb').read()).text.strip())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "big.pdf"), str(tmp_path / "small.pdf")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert run.stdout == "needs more than 16 MB of memory to read; skipped\nBC\n"
