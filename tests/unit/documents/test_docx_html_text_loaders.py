"""DOCX, HTML, plain-text and Markdown loaders on the fixtures of tests/fixtures/files/make_office.py."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from rag.documents.assemble import control_free
from rag.documents.docx import DocxLoader
from rag.documents.html import HtmlLoader
from rag.documents.model import Extracted
from rag.documents.plain import MarkdownLoader, TextLoader
from rag.errors import CorruptFileError, EncryptedFileError, GarbageFileError, UnsupportedFileError

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"


def _read(loader, name: str) -> Extracted:
    ex = loader.extract((FILES / name).read_bytes(), name)
    assert control_free(ex.text) and control_free(ex.title)
    for b in ex.blocks:
        assert 0 <= b.start < b.end <= len(ex.text)
    assert [b.start for b in ex.blocks] == sorted(b.start for b in ex.blocks)
    return ex


def _blocks(ex: Extracted) -> list[tuple[str, str, int]]:
    return [(b.kind, ex.text[b.start:b.end], b.level) for b in ex.blocks]


# ----------------------------------------------------------------------------- DOCX

def test_docx_headings_keep_their_levels_from_styles_korean_names_and_outline_levels():
    ex = _read(DocxLoader(), "structured.docx")
    headings = [(t, lvl) for k, t, lvl in _blocks(ex) if k == "heading"]
    # the styles give 1, 2, 3, 3; a statute's articles take their fixed level 5 (as in statute markdown)
    assert headings == [("# 휴가 규정", 1), ("## 제1장 총칙", 2), ("##### 제1조 (목적)", 5), ("##### 제2조 (연가)", 5)]


def test_docx_body_order_is_paragraph_table_paragraph_and_rows_hold_merged_cells_once():
    ex = _read(DocxLoader(), "structured.docx")
    kinds = _blocks(ex)
    para = next(i for i, b in enumerate(kinds) if b[1].startswith("이 규정은"))
    rows = [i for i, b in enumerate(kinds) if b[0] == "table_row"]
    after = next(i for i, b in enumerate(kinds) if b[1] == "표 다음 문단이다.")
    assert para < rows[0] and rows[-1] < after and rows == list(range(rows[0], rows[0] + 3))
    assert [kinds[i][1] for i in rows] == ["구분 | 일수 | 비고", "연가 | 15일 | 유급 또는 진단서", "병가 60일 |"]
    assert ex.text.count("병가 60일") == 1 and ex.text.count("진단서") == 1


def test_docx_list_numbers_line_breaks_core_properties_and_no_page_furniture():
    ex = _read(DocxLoader(), "structured.docx")
    assert [t for k, t, _ in _blocks(ex) if k == "list_item"] == ["1. 첫째 항목", "2. 둘째 항목"]
    assert "줄 하나\n줄 둘" in ex.text
    assert ex.title == "휴가 규정 (문서 속성)"
    assert dict(ex.metadata) == {"author": "인사팀", "created": "2024-03-01T09:30:00+00:00",
                                 "modified": "2025-01-02T10:00:00+00:00", "subject": "복무", "keywords": "휴가, 연가"}
    assert "머리글" not in ex.text and "바닥글" not in ex.text


def test_docx_without_a_title_property_takes_the_first_heading():
    ex = _read(DocxLoader(), "untitled.docx")
    assert ex.title == "출장 안내"
    assert ex.text.startswith("머리말 없는 첫 문단.\n\n## 출장 안내")


def test_docx_protected_broken_and_legacy_files_are_refused_with_the_right_error():
    with pytest.raises(EncryptedFileError, match="password-protected") as exc:
        DocxLoader().extract((FILES / "encrypted.docx").read_bytes(), "encrypted.docx")
    assert exc.value.file == "encrypted.docx" and exc.value.reason == "encrypted"
    with pytest.raises(CorruptFileError, match="broken"):
        DocxLoader().extract((FILES / "broken.docx").read_bytes(), "broken.docx")
    with pytest.raises(CorruptFileError, match="not a DOCX"):
        DocxLoader().extract(b"plain text, not a zip", "x.docx")
    with pytest.raises(UnsupportedFileError, match=r"\.doc"):
        DocxLoader().extract((FILES / "legacy.doc").read_bytes(), "legacy.doc")


def test_docx_zip_without_a_word_document_is_corrupt():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
    with pytest.raises(CorruptFileError):
        DocxLoader().extract(buf.getvalue(), "empty.docx")


# ----------------------------------------------------------------------------- HTML

BOILERPLATE = ("SCRIPT_TEXT", "SITE_HEADER", "SEARCH_BUTTON", "NAV_HOME", "NAV_ABOUT", "COOKIE_TEXT", "동의",
               "BREADCRUMB_HOME", "SIDEBAR_TITLE", "SHARE_TEXT", "FOOTER_TEXT", "바로가기", "color:red")


@pytest.mark.parametrize("name", ["page.html", "euckr.html"])
def test_html_keeps_the_main_content_and_drops_navigation_banners_and_scripts(name):
    ex = _read(HtmlLoader(), name)
    assert [s for s in BOILERPLATE if s in ex.text] == []
    blocks = _blocks(ex)
    assert [(t, lvl) for k, t, lvl in blocks if k == "heading"] == [("# 출장 여비 안내", 1), ("## 지급 기준", 2),
                                                                     ("### 부칙", 3)]
    assert ("paragraph", "여비는 운임·일비&숙박비로 나뉜다 <개정 2024.1.1> 한글.", 0) in blocks  # entities decoded
    assert ("paragraph", "첫 줄\n둘째 줄", 0) in blocks  # <br>
    assert [t for k, t, _ in blocks if k == "list_item"] == ["국내 출장", "국외 출장"]
    assert [t for k, t, _ in blocks if k == "table_row"] == ["구분 | 금액", "일비 | 25,000원"]
    assert ("paragraph", "식 = 일비\n× 일수", 0) in blocks  # <pre> keeps its lines
    assert blocks[-1] == ("paragraph", "이 안내는 2024년부터 적용한다.", 0)
    assert ex.title == "출장 여비 안내"
    assert dict(ex.metadata) == {"language": "ko", "description": "여비 지급 기준 요약", "keywords": "여비, 출장",
                                 "author": "총무과"}
    assert not ex.warnings


def test_html_without_main_drops_elements_named_as_navigation():
    ex = _read(HtmlLoader(), "no_main.html")
    assert ex.text == "## 연가 신청\n\n연가는 하루 전까지 신청한다.\n\n반차도 가능하다."
    assert [w.code for w in ex.warnings] == ["main_not_marked"]
    assert ex.title == "공지"


def test_html_title_falls_back_to_og_title_then_the_first_heading_and_charset_comes_from_meta():
    og = b'<html><head><meta property="og:title" content="OG"></head><body><main><h2>H</h2></main></body></html>'
    assert HtmlLoader().extract(og, "a.html").title == "OG"
    bare = "<html><body><article><h2>연가</h2><p>본문</p></article></body></html>".encode("cp949")
    ex = HtmlLoader().extract(bare, "b.html")
    assert ex.title == "연가" and ex.text == "## 연가\n\n본문"
    assert [w.code for w in ex.warnings] == ["encoding_guessed"]
    declared = '<meta http-equiv="Content-Type" content="text/html; charset=ks_c_5601-1987"><p>한글 문단</p>'
    ex = HtmlLoader().extract(declared.encode("cp949"), "c.html")
    assert ex.text == "한글 문단" and not ex.warnings


def test_html_page_that_is_all_furniture_by_name_is_read_whole_with_a_warning():
    page = b'<html><body><div class="sidebar-layout"><p>Only text here.</p></div></body></html>'
    ex = HtmlLoader().extract(page, "x.html")
    assert ex.text == "Only text here." and [w.code for w in ex.warnings] == ["boilerplate_kept"]


def test_html_header_inside_an_article_and_an_ordered_list_are_content():
    page = (b"<body><nav>menu</nav><article><header><h1>T</h1></header><ol start='3'><li>a<li>b</ol>"
            b"<footer>article note</footer></article><footer>site</footer></body>")
    ex = HtmlLoader().extract(page, "x.html")
    assert ex.text == "# T\n\n3. a\n4. b\n\narticle note"


# ----------------------------------------------------------------------------- plain text

def test_cp949_text_is_decoded_with_a_warning_naming_the_encoding():
    ex = _read(TextLoader(), "cp949.txt")
    assert ex.text == _read(TextLoader(), "statute.txt").text
    assert [w.code for w in ex.warnings] == ["encoding_guessed"] and "cp949" in ex.warnings[0].message


def test_statute_as_plain_text_stays_paragraphs_with_inner_line_breaks():
    ex = _read(TextLoader(), "statute.txt")
    assert {b.kind for b in ex.blocks} == {"paragraph"}
    assert "\n\n제1조(목적) 이 영은 국가공무원이 공무로 여행을 하는 경우에\n지급하는" in ex.text
    assert "#" not in ex.text and ex.title == ""


def test_utf16_with_bom_and_form_feed_pages():
    assert _read(TextLoader(), "utf16.txt").text == _read(TextLoader(), "statute.txt").text
    ex = TextLoader().extract("첫 쪽 문단\f둘째 쪽 문단".encode(), "p.txt")
    assert [(p.number, ex.text[p.start:p.end].strip()) for p in ex.pages] == [(1, "첫 쪽 문단"), (2, "둘째 쪽 문단")]


@pytest.mark.parametrize("name,found", [("nul.txt", "2048 NUL bytes"), ("random.txt", "no text encoding fits")])
def test_binary_content_is_garbage_and_the_message_says_what_was_found(name, found):
    with pytest.raises(GarbageFileError, match=found) as exc:
        TextLoader().extract((FILES / name).read_bytes(), name)
    assert exc.value.file == name and name in str(exc.value)


def test_control_characters_in_valid_utf8_are_garbage_when_many_and_removed_when_few():
    with pytest.raises(GarbageFileError, match="control or replacement characters"):
        TextLoader().extract(("abc\x01\x02\x03\x04" * 50).encode(), "c.txt")
    ex = TextLoader().extract("정상 문단\x07입니다 그리고 충분히 긴 나머지 문장이 이어진다.".encode(), "d.txt")
    assert ex.text == "정상 문단입니다 그리고 충분히 긴 나머지 문장이 이어진다." and control_free(ex.text)


def test_a_pdf_with_a_txt_name_is_told_apart_in_the_message():
    with pytest.raises(GarbageFileError, match="PDF"):
        TextLoader().extract(b"%PDF-1.7\n" + bytes(range(256)) * 8, "report.txt")


# ----------------------------------------------------------------------------- Markdown

def test_front_matter_becomes_metadata_and_is_removed_from_the_text():
    ex = _read(MarkdownLoader(), "front_matter.md")
    assert dict(ex.metadata) == {"title": "출장 규정", "id": "travel-rules", "version": "2024-03",
                                 "uri": "https://example.org/travel", "access": {"groups": ["staff"]},
                                 "effective": "2024-03-01", "owner": "총무과"}
    assert ex.title == "출장 규정"
    assert ex.text.startswith("# 출장 규정 본문\n\n## 제1장 총칙\n\n제1조(목적)") and "owner" not in ex.text


def test_markdown_blocks_headings_lists_tables_and_code_fences():
    ex = _read(MarkdownLoader(), "front_matter.md")
    blocks = _blocks(ex)
    assert [(t, lvl) for k, t, lvl in blocks if k == "heading"] == [("# 출장 규정 본문", 1), ("## 제1장 총칙", 2)]
    assert [t for k, t, _ in blocks if k == "list_item"] == ["- 국내 출장", "- 국외 출장"]
    assert [t for k, t, _ in blocks if k == "table_row"] == ["구분 | 일비", "국내 | 25,000원", "국외 | 실비"]
    assert ("paragraph", "```\n# 코드 속 줄은 제목이 아니다\n```", 0) in blocks
    assert blocks[-1] == ("paragraph", "끝 문단\n둘째 줄", 0)


def test_bad_front_matter_warns_and_keeps_the_text():
    ex = _read(MarkdownLoader(), "bad_front_matter.md")
    assert [w.code for w in ex.warnings] == ["front_matter_invalid"]
    assert dict(ex.metadata) == {}
    assert ex.text == "title: [unclosed\nid: : :\n\n# 본문 제목\n\n내용 문단."
    assert ex.title == "본문 제목"


def test_markdown_statute_keeps_its_lines_as_written_and_setext_headings():
    src = "# 법\n\n##### 제1조 (목적)\n\n**①** 항 본문\n  1\\. 호 하나\n\n소제목\n---\n\n본문"
    ex = MarkdownLoader().extract(src.encode(), "law.md")
    assert ex.text == "# 법\n\n##### 제1조 (목적)\n\n**①** 항 본문\n1\\. 호 하나\n\n## 소제목\n\n본문"
    assert ex.title == "법"
