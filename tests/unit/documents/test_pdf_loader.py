"""PDF loader on the fixtures of tests/fixtures/files/make_pdfs.py and one kolaw dev PDF."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rag.documents import pdf as pdf_mod
from rag.documents.assemble import control_free
from rag.documents.files import read_file
from rag.documents.pdf import PdfLoader
from rag.documents.pdf_join import char_rule, decide_spaces, usage
from rag.documents.pdf_layout import Line, is_page_number, running_lines
from rag.documents.pdf_tables import Rule, find_grids
from rag.errors import CorruptFileError, EmptyFileError, EncryptedFileError, ScannedFileError

ROOT = Path(__file__).resolve().parents[3]
FILES = ROOT / "tests" / "fixtures" / "files"
KOLAW = ROOT / "data" / "dev" / "kolaw-files" / "pdf"
TITLE = "시험 법률 시행령"


def load(name: str, **config) -> object:
    return PdfLoader(**config).extract((FILES / name).read_bytes(), name)


@pytest.fixture(scope="module")
def statute():
    return load("statute_3p.pdf")


def page_of(ex, pos: int) -> list[int]:
    return [p.number for p in ex.pages if p.start <= pos < p.end]


def block_with(ex, needle: str):
    found = [b for b in ex.blocks if needle in ex.text[b.start:b.end]]
    assert len(found) == 1, needle
    return found[0]


def test_pages_are_numbered_from_one_and_tile_the_text(statute):
    assert [p.number for p in statute.pages] == [1, 2, 3]
    assert statute.pages[0].start == 0 and statute.pages[-1].end == len(statute.text)
    assert all(a.end == b.start for a, b in zip(statute.pages, statute.pages[1:]))
    assert statute.title == TITLE and statute.metadata["pages"] == 3


def test_every_block_lies_on_the_page_it_was_printed_on(statute):
    expect = {"##### 제1조 (목적)": [1], "##### 제4조 (수수료)": [2], "재검사 | 5,000원": [2],
              "**②** 수수료는 현금 또는 정보통신망을 이용한": [3], "# 시험 법률 시행령": [1]}
    for needle, pages in expect.items():
        b = block_with(statute, needle)
        assert page_of(statute, b.start) == pages, needle
    starts = [b.start for b in statute.blocks]
    assert starts == sorted(starts) and all(0 <= b.start < b.end <= len(statute.text) for b in statute.blocks)


def test_headings_keep_their_rank_and_a_statutes_units_take_their_fixed_levels(statute):
    heads = [(b.level, statute.text[b.start:b.end]) for b in statute.blocks if b.kind == "heading"]
    # by font size the article headings rank third; as a statute's articles they are level 5
    assert heads[:3] == [(1, "# 시험 법률 시행령"), (2, "## 제1장 총칙"), (5, "##### 제1조 (목적)")]


def test_running_header_and_footer_are_removed_with_one_warning(statute):
    lines = statute.text.split("\n")
    assert not [ln for ln in lines if is_page_number(ln)]
    assert statute.text.count(TITLE) == 1  # the title heading only, not the running header
    warns = [w for w in statute.warnings if w.code == "header_removed"]
    assert len(warns) == 1 and TITLE in warns[0].message and "- 1 -" in warns[0].message


def test_a_paragraph_across_a_page_break_is_one_block_on_both_pages(statute):
    b = block_with(statute, "알려야 한다. 시ㆍ도지사는")
    text = statute.text[b.start:b.end]
    assert text.startswith("**①** 사업자는") and text.endswith("결과를 보고하여야 한다.")
    assert page_of(statute, b.start) == [1] and page_of(statute, b.end - 1) == [2]
    assert b.start < statute.pages[1].start < b.end


def test_hard_wrapped_lines_rejoin_without_gluing_or_splitting_words(statute):
    text = statute.text
    for phrase in ("기계ㆍ기구를 말한다.", "일산화탄소, 질소산화물", "천재지변이나 그 밖의 부득이한 사유로",
                   "정보통신망을 이용한 전자화폐ㆍ전자결제 등의 방법으로 낼 수 있다."):
        assert phrase in text, phrase
    assert "말 한다" not in text and "\n한다." not in text


def test_statute_units_and_list_items_start_blocks(statute):
    kinds = {statute.text[b.start:b.end][:2]: b.kind for b in statute.blocks}
    assert kinds["1."] == "list_item" and kinds["2."] == "list_item"
    assert block_with(statute, "**②** 제1항에 따른 측정의 방법").kind == "paragraph"


def test_aligned_columns_become_table_rows(statute):
    rows = [statute.text[b.start:b.end] for b in statute.blocks if b.kind == "table_row"]
    assert rows == ["정기검사 | 10,000원", "수시검사 | 20,000원", "재검사 | 5,000원"]


def test_output_has_no_control_characters(statute):
    for ex in (statute, load("scanned_middle.pdf")):
        assert control_free(ex.text) and "\x00" not in ex.text


def test_a_page_without_text_layer_is_warned_and_empty():
    ex = load("scanned_middle.pdf")
    scanned = [w for w in ex.warnings if w.code == "scanned_page"]
    assert [(w.page, w.message) for w in scanned] == [(2, "page 2: scanned: no text layer")]
    p1, p2, p3 = ex.pages
    assert p2.start == p2.end and "제1조 (목적)" in ex.text[p1.start:p1.end]
    assert "제6조 (시행일)" in ex.text[p3.start:p3.end]


def test_no_text_on_any_page_raises_scanned():
    with pytest.raises(ScannedFileError) as err:
        load("scanned_all.pdf")
    assert err.value.reason == "scanned" and err.value.file == "scanned_all.pdf"
    assert "scanned_all.pdf" in str(err.value) and "OCR" in str(err.value)


def test_password_raises_encrypted():
    with pytest.raises(EncryptedFileError) as err:
        load("encrypted.pdf")
    assert err.value.file == "encrypted.pdf" and "password" in str(err.value)


@pytest.mark.parametrize("data", [b"\x00\x01garbage" * 40, b"%PDF-1.7\n%broken\n",
                                  (FILES / "statute_3p.pdf").read_bytes()[:3000]])
def test_garbage_or_truncated_bytes_raise_corrupt(data):
    with pytest.raises(CorruptFileError) as err:
        PdfLoader().extract(data, "bad.pdf")
    assert err.value.reason == "corrupt" and "bad.pdf" in str(err.value)


def test_empty_bytes_raise_empty():
    with pytest.raises(EmptyFileError):
        PdfLoader().extract(b"", "none.pdf")


def test_ocr_without_tesseract_warns(monkeypatch):
    monkeypatch.setattr(pdf_mod.shutil, "which", lambda _name: None)
    ex = load("scanned_middle.pdf", ocr=True)
    codes = [w.code for w in ex.warnings]
    assert codes.count("ocr_unavailable") == 1 and codes.count("scanned_page") == 1


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")
def test_ocr_reads_the_scanned_page():
    ex = load("scanned_middle.pdf", ocr=True)
    warn = [w for w in ex.warnings if w.code == "ocr_page"]
    assert len(warn) == 1 and warn[0].page == 2 and "confidence" in warn[0].message
    p2 = ex.pages[1]
    page2 = "".join(ex.text[p2.start:p2.end].split())
    assert sum(word in page2 for word in ("보고", "사업자", "매년", "하여야")) >= 2
    assert not any(w.code == "scanned_page" for w in ex.warnings)


def test_read_file_goes_through_the_pdf_loader():
    got = read_file(FILES / "statute_3p.pdf")
    assert got.format == "pdf" and len(got.extracted.pages) == 3


def test_a_character_wrapped_kolaw_pdf_reads_back_clean():
    manifest = {m["file"]: m for m in json.loads((KOLAW / "manifest.json").read_text(encoding="utf-8"))}
    name = next(f for f, m in manifest.items() if m["wrap"] == "char")
    ex = PdfLoader().extract((KOLAW / name).read_bytes(), name)
    assert len(ex.pages) == manifest[name]["pages"] and ex.title == manifest[name]["title"]
    lines = [ln for ln in ex.text.split("\n") if ln]
    assert not [ln for ln in lines if is_page_number(ln) or ln == manifest[name]["title"]]
    assert [w.code for w in ex.warnings] == ["header_removed"]


# -- the join rules, without a PDF ------------------------------------------------------------

@pytest.mark.parametrize("left,right,space", [
    ("2009.9.8", ", 2013.3.23", False), ("「공무원", "임용령」", None), ("「국가공무원법」", "제47조", None),
    ("<개정 2020.", "1.7>", False), ("제18조의", "6에 따른", False),
    ("기관", "(이하", False), ("의무경찰ㆍ", "경찰대학생", False), ("말하며,", "이하", True),
    ('"공무원', '"이라', False), ('이하 "', "공무원", False), ("2024", "년", None), ("abc", "def", False),
])
def test_typography_rules(left, right, space):
    assert char_rule(left, right) is space


def test_the_documents_own_spelling_decides():
    context = "소속 장관은 정한다.\n소속 장관이 다음 달부터 정한다."
    assert usage("그 소속", "장관의 승인", context) is True
    assert usage("규정으로 정한", "다. <개정>", context) is False
    assert usage("처음 보는", "낱말", context) is None


def test_morphology_reads_korean_breaks():
    pytest.importorskip("kiwipiepy")
    pairs = [("배출되는 일산화탄", "소를 측정한다"), ("국가공무원에게 지급하는", "수당과 실비"),
             ("인사혁신처장이 정한", "다. <신설>"), ("조정위원회를 둘 수 있", "다.")]
    assert decide_spaces(pairs) == [False, True, False, False]


def _line(page: int, text: str, y: float) -> Line:
    return Line(page, text, 70.0, 300.0, y, 10.0, False, 10.0, 30.0, False, False, 2.8, (text,), (70.0,))


def test_running_lines_need_repetition_at_the_same_height():
    pages = []
    for p in range(1, 5):
        lines = [_line(p, "표본 법률", 800.0)]
        if p == 1:
            lines.append(_line(p, "표본 법률", 740.0))  # the title heading: same text, other height
        lines += [_line(p, f"본문 {p}쪽의 첫 문장", 700.0), _line(p, f"본문 {p}쪽의 끝 문장", 120.0),
                  _line(p, f"{p} / 4", 40.0)]
        pages.append(lines)
    drop, names = running_lines(pages)
    assert (0, 1) not in drop and all((p, 0) in drop for p in range(4))
    assert all((p, len(pages[p]) - 1) in drop for p in range(4))
    assert "표본 법률" in names
    few, _ = running_lines(pages[:2])  # two pages: only the page numbers go
    assert few == {(0, 4), (1, 3)}


# -- ruled tables (drawn here with reportlab and its built-in Korean CID font) ------------------

def _ruled_table_pdf() -> bytes:
    """Paragraphs around a 2-column ruled table: a larger header row, a left cell on two lines
    beside a vertically centred one, a left cell merged over two rows and wrapped mid-word."""
    pytest.importorskip("reportlab")
    import io

    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    font = "HYSMyeongJo-Medium"
    pdfmetrics.registerFont(UnicodeCIDFont(font))
    buf = io.BytesIO()
    c = canvas.Canvas(buf, invariant=1)
    c.setFont(font, 10)
    for k, text in enumerate(["제1조 (목적) 이 규정은 시설의 사용료를 정한다.",
                              "제2조 (사용료) 사용료는 다음 표와 같다."]):
        c.drawString(70, 720 - 16 * k, text)
    pad = 4.0
    x0 = 70.0
    x1 = x0 + pdfmetrics.stringWidth("냉난방비 사용", font, 10) + 2 * pad  # the line fills the cell
    x2 = x1 + 150.0
    ys = [650.0, 630.0, 600.0, 578.0, 556.0]
    for y in ys:
        c.line(x0 if y != 578.0 else x1, y, x2, y)  # no rule under the merged left cell
    for x in (x0, x1, x2):
        c.line(x, ys[0], x, ys[-1])
    c.setFont(font, 12)
    c.drawString(x0 + pad, 636, "항 목")
    c.drawString(x1 + pad, 636, "내 용")
    c.setFont(font, 10)
    for text, x, y in [("시기적", x0 + pad, 618), ("적절성", x0 + pad, 606),
                       ("대체시기의 적절성 기술", x1 + pad, 612),
                       ("냉난방비 사용", x0 + pad, 588), ("료는 따로", x0 + pad, 575),
                       ("부과한다", x0 + pad, 562),
                       ("100명 이하", x1 + pad, 586), ("100명 초과", x1 + pad, 564)]:
        c.drawString(x, y, text)
    c.drawString(70, 520, "제3조 (납부) 사용료는 사용하기 전에 낸다.")
    c.save()
    return buf.getvalue()


def test_a_ruled_table_reads_row_by_row_with_whole_cells():
    ex = PdfLoader().extract(_ruled_table_pdf(), "ruled.pdf")
    rows = [ex.text[b.start:b.end] for b in ex.blocks if b.kind == "table_row"]
    assert rows == ["항 목 | 내 용", "시기적 적절성 | 대체시기의 적절성 기술",
                    "냉난방비 사용료는 따로 부과한다 | 100명 이하", "| 100명 초과"]
    heads = [ex.text[b.start:b.end] for b in ex.blocks if b.kind == "heading"]
    assert heads == ["##### 제1조 (목적)", "##### 제2조 (사용료)", "##### 제3조 (납부)"]  # the header row is no heading
    paras = [ex.text[b.start:b.end] for b in ex.blocks if b.kind == "paragraph"]
    assert paras == ["이 규정은 시설의 사용료를 정한다.", "사용료는 다음 표와 같다.", "사용료는 사용하기 전에 낸다."]
    assert ex.text.index("제2조") < ex.text.index("항 목") < ex.text.index("제3조")


def test_grids_need_two_cells_side_by_side():
    box = [Rule(True, 700, 70, 300), Rule(True, 600, 70, 300),
           Rule(False, 70, 600, 700), Rule(False, 300, 600, 700)]
    assert find_grids(box) == []  # a box around a paragraph
    assert find_grids([Rule(True, 700, 70, 300)]) == []  # an underline
    split = box + [Rule(False, 150, 600, 700), Rule(True, 650, 150, 300)]
    (grid,) = find_grids(split)
    assert grid.owner == ((0, 1), (0, 2))  # the left cell spans both rows
    assert grid.cell_at(100, 620) == 0 and grid.cell_at(200, 620) == 2 and grid.cell_at(50, 620) is None
