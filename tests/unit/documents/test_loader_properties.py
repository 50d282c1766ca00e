"""Properties of every loader, on generated files (hypothesis):

- a loader either returns text free of NUL and control characters (``\\n`` and ``\\t`` aside) or
  raises a :class:`FileExtractionError` with a reason: never another exception, whatever the
  bytes;
- every chunk of the document a file becomes is ``text[start:end]``, and its pages map back into
  the page table: the chunk's first page is the page of its first character, its last page the
  page of its last one, and each page beginning inside it begins where the file's page does.

Text is built from statute-shaped pieces (article headings, paragraph marks, items) mixed with
control characters, zero-width and odd whitespace, and random text; each format writes it the
way its writer can (XML formats cannot hold control characters, so there they are left out, and
the PDF draws only what its built-in CID font has).
"""
from __future__ import annotations

import html
import io
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.documents.assemble import control_free
from rag.documents.files import read_file, to_document
from rag.errors import FileExtractionError
from rag.index.chunking import Chunker

PIECES = ["제1조 (목적)", "제2조의2 (정의)", "제1장 총칙", "① ", "② ", "1. ", "가. ", "\n", "\n\n", "# ", "- ",
          "\x00", "\x07", "\x1b", "\x7f", "\x85", "\u200b", "\ufeff", "\u2028", "\r\n", "\r", "\t", "\f",
          "다만, 제3항에 따른 경우에는 그러하지 아니하다.", "근로시간은 1주 40시간을 초과할 수 없다.", "Overtime is paid."]
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=30).map("".join)
# What the PDF's built-in Korean font draws: Hangul, ASCII letters, digits and statute punctuation.
PDF_CHARS = st.one_of(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
                      st.sampled_from("abcXYZ0123456789 .,()-①②③ㆍ「」"))
PDF_LINES = st.lists(st.text(alphabet=PDF_CHARS, min_size=1, max_size=40), min_size=1, max_size=60)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _xml_safe(text: str) -> str:
    return "".join(c for c in text if c in "\t\n" or (" " <= c and c not in "\x7f\ufffe\uffff")
                   and not 0xD800 <= ord(c) <= 0xDFFF)


def _docx(text: str) -> bytes:
    import docx

    d = docx.Document()
    for para in _xml_safe(text).split("\n"):
        d.add_paragraph(para)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _hwpx(text: str) -> bytes:
    ns = 'xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section"'
    paras = "".join(f'<hp:p><hp:run><hp:t>{html.escape(p)}</hp:t></hp:run></hp:p>'
                    for p in _xml_safe(text).split("\n"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/hwp+zip")
        z.writestr("Contents/content.hpf", '<?xml version="1.0"?><opf:package xmlns:opf="http://www.idpf.org/2007/opf/">'
                   '<opf:manifest><opf:item id="section0" href="Contents/section0.xml"/></opf:manifest>'
                   '<opf:spine><opf:itemref idref="section0"/></opf:spine></opf:package>')
        z.writestr("Contents/header.xml", '<?xml version="1.0"?><hh:head xmlns:hh="http://www.hancom.co.kr/hwpml/2011/head"/>')
        z.writestr("Contents/section0.xml", f'<?xml version="1.0"?><hs:sec {ns}>{paras}</hs:sec>')
    return buf.getvalue()


def _html(text: str) -> bytes:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n"))
    return f"<html><head><title>t</title></head><body><main>{body}</main></body></html>".encode("utf-8", "surrogatepass")


WRITERS = {
    "txt": lambda t: t.encode("utf-8", "surrogatepass"),
    "md": lambda t: t.encode("utf-8", "surrogatepass"),
    "html": _html,
    "docx": _docx,
    "hwpx": _hwpx,
}


def _pdf(pages: list[list[str]]) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("HYSMyeongJo-Medium"))
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=1)
    for lines in pages:
        c.setFont("HYSMyeongJo-Medium", 11)
        y = 800.0
        for line in lines:
            c.drawString(60, y, line)
            y -= 14
            if y < 60:
                break
        c.showPage()
    c.save()
    return buf.getvalue()


def check_file(path: Path) -> None:
    """The two properties for one file (a refusal with a reason passes the first)."""
    try:
        f = read_file(path)
    except FileExtractionError as exc:
        assert exc.reason
        return
    text = f.extracted.text
    assert control_free(text), repr(text)
    assert control_free(f.extracted.title or "")
    doc = to_document(f, path.name)
    pages = [(p.start, p.number) for p in f.extracted.pages if p.end > p.start]
    for c in Chunker().chunk(doc):
        assert c.text == text[c.start_char:c.end_char]
        assert control_free(c.text)
        if not pages:
            assert c.page is None and c.page_breaks == ()
            continue
        assert c.page == _page_of(pages, c.start_char)
        assert c.page_end == _page_of(pages, c.end_char - 1)
        for at, number in c.page_breaks:
            assert (c.start_char + at, number) in pages


def _page_of(pages: list[tuple[int, int]], offset: int) -> int:
    return [n for start, n in pages if start <= offset][-1]


@pytest.mark.parametrize("ext", sorted(WRITERS))
@SETTINGS
@given(text=TEXT)
def test_text_of_every_format_is_clean_and_chunks_map_back(ext, text, tmp_path):
    path = tmp_path / f"doc.{ext}"
    path.write_bytes(WRITERS[ext](text))
    check_file(path)


@SETTINGS
@given(pages=st.lists(PDF_LINES, min_size=1, max_size=4))
def test_pdf_pages_are_clean_and_chunks_map_back_to_their_pages(pages, tmp_path):
    path = tmp_path / "doc.pdf"
    path.write_bytes(_pdf(pages))
    check_file(path)


@pytest.mark.parametrize("ext", ["txt", "md", "html", "docx", "hwpx", "hwp", "pdf"])
@SETTINGS
@given(data=st.binary(max_size=2000))
def test_any_bytes_give_clean_text_or_a_typed_refusal(ext, data, tmp_path):
    path = tmp_path / f"doc.{ext}"
    path.write_bytes(data)
    check_file(path)
