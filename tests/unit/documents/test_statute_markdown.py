"""A statute read from a file the loader writes the markup of (PDF, DOCX, HTML, HWP, HWPX) is written in
the markdown a statute's text is given in: the same chunks, locators and embeddings either way."""
from __future__ import annotations

import pytest

from rag.config import ChunkingConfig
from rag.documents.assemble import TextAssembler
from rag.index.chunking import Chunker
from rag.documents.statute import article_heading, bold_paragraph_mark, part_level, split_article
from rag.types import Document

MARKDOWN = ("# 공무원 여비 규정\n\n## 제3장 일비ㆍ숙박비 및 식비\n\n##### 제17조 (동일 지역 장기체재 중 일비의 감액)\n\n"
            "**①** 같은 곳에 장기간 체재하는 경우의 일비는 15일을 초과한 경우에는 정액의 10분의 1을 빼고 지급한다.\n\n"
            "**②** 제1항의 경우에 다른 지역에 출장하는 경우에는 그 기간을 빼고 계산한다.\n\n"
            "1. 첫째 경우\n2. 둘째 경우")


def written(fmt: str, article_level: int = 3) -> str:
    """The statute above as a loader feeds it: levels by font size or style, plain marks."""
    asm = TextAssembler(fmt)
    asm.block("heading", "공무원 여비 규정", 1)
    asm.block("heading", "제3장 일비ㆍ숙박비 및 식비", 1)
    asm.block("heading", "제17조 (동일 지역 장기체재 중 일비의 감액)", article_level)
    asm.block("paragraph", "① 같은 곳에 장기간 체재하는 경우의 일비는 15일을 초과한 경우에는 정액의 10분의 1을 빼고 지급한다.")
    asm.block("paragraph", "② 제1항의 경우에 다른 지역에 출장하는 경우에는 그 기간을 빼고 계산한다.")
    asm.block("list_item", "1. 첫째 경우")
    asm.block("list_item", "2. 둘째 경우")
    return asm.done(title="공무원 여비 규정").text


@pytest.mark.parametrize("fmt", ["pdf", "docx", "html", "hwpx", "hwp"])
@pytest.mark.parametrize("article_level", [2, 3, 6])
def test_a_statute_from_a_file_is_written_as_its_markdown(fmt, article_level):
    assert written(fmt, article_level) == MARKDOWN


def test_the_same_statute_gives_the_same_chunks_and_locators_from_a_file_and_from_markdown():
    chunker = Chunker(ChunkingConfig(max_tokens=60, overlap_tokens=0))
    from_md = chunker.chunk(Document(id="law", text=MARKDOWN, title="공무원 여비 규정"))
    from_pdf = chunker.chunk(Document(id="law", text=written("pdf"), title="공무원 여비 규정"))
    assert len(from_md) > 1
    assert [(c.text, c.locator, c.heading_path) for c in from_pdf] == [(c.text, c.locator, c.heading_path)
                                                                        for c in from_md]
    assert all(c.locator.startswith("제17조") for c in from_pdf)


def test_text_the_user_wrote_keeps_its_marks_and_levels():
    for fmt in ("markdown", "text"):
        asm = TextAssembler(fmt)
        asm.block("heading", "제17조 (일비)", 3)
        asm.block("paragraph", "① 같은 곳에")
        assert asm.done().text == "### 제17조 (일비)\n\n① 같은 곳에"


def test_marks_are_bold_only_in_a_statute():
    asm = TextAssembler("docx")
    asm.block("heading", "설문 안내", 2)
    asm.block("paragraph", "① 첫째 문항에 답하세요.")
    assert asm.done().text == "## 설문 안내\n\n① 첫째 문항에 답하세요."
    asm = TextAssembler("hwp")
    asm.block("paragraph", "제2조(근무시간)")  # an article written as a paragraph is an article heading too
    asm.block("paragraph", "① 직원의 근무시간은 1일 8시간으로 한다.")
    assert asm.done().text == "##### 제2조 (근무시간)\n\n**①** 직원의 근무시간은 1일 8시간으로 한다."


def test_an_article_run_into_its_first_paragraph_is_split_as_statute_markdown_writes_it():
    asm = TextAssembler("pdf")
    asm.page(1)
    para = "제3조(개인정보 보호 원칙) ① 개인정보처리자는 처리 목적을 명확하게 하여야 한다."
    asm.block("paragraph", para)
    asm.page_inside(2, para.index("명확하게"))
    asm.block("paragraph", "② 개인정보처리자는 적합하게 처리하여야 한다.")
    asm.block("paragraph", "제5조(정의)에 따른 사항은 따로 정한다.")  # a reference opening a paragraph: no heading
    ex = asm.done()
    assert ex.text == ("##### 제3조 (개인정보 보호 원칙)\n\n**①** 개인정보처리자는 처리 목적을 명확하게 하여야 한다.\n\n"
                       "**②** 개인정보처리자는 적합하게 처리하여야 한다.\n\n제5조(정의)에 따른 사항은 따로 정한다.")
    assert [b.kind for b in ex.blocks] == ["heading", "paragraph", "paragraph", "paragraph"]
    assert ex.text[ex.pages[1].start:].startswith("명확하게 하여야 한다.")


def test_a_page_inside_a_bold_marked_paragraph_starts_where_its_text_does():
    asm = TextAssembler("pdf")
    asm.page(1)
    asm.block("heading", "제1조 (목적)", 3)
    para = "① 사업자는 측정 결과를 매일 기록하고 보존하여야 한다."
    asm.block("paragraph", para)
    asm.page_inside(2, para.index("보존"))  # the offset in the text as the loader passed it
    ex = asm.done()
    assert ex.text[ex.pages[1].start:].startswith("보존하여야 한다.")


def test_statute_unit_levels_and_marks():
    assert [part_level(h) for h in ("제1편 총칙", "제2장 근로계약", "제3절 보칙", "제1관 통칙",
                                             "제8조의2 (정산)", "제17조(일비) ① 같은", "공무원 여비 규정")] == [
        1, 2, 3, 4, None, None, None]
    assert article_heading("제8조의2 (정산)") == "제8조의2 (정산)"  # an article: level ARTICLE_LEVEL (5)
    assert article_heading("제17조(일비의 감액)") == "제17조 (일비의 감액)"
    assert article_heading("제17조(일비) ① 같은") is None and article_heading("공무원 여비 규정") is None
    assert bold_paragraph_mark("① 같은 곳에") == "**①** 같은 곳에"
    assert bold_paragraph_mark("①같은") == "①같은" and bold_paragraph_mark("제1항 ①") == "제1항 ①"
    assert split_article("제2조(근무시간) 직원은") == ("제2조 (근무시간)", 10)
    assert split_article("이 법 제2조에 따라") is None and split_article("제5조(정의)에 따른") is None
