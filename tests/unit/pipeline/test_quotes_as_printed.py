"""Issue 42: a citation's quote reads as the file prints it. A statute read from a PDF or DOCX is indexed
in statute markdown (paragraph marks in bold, ``**①**``, so it chunks and embeds as the same statute
given as markdown), but the quote an answer shows has no ``**``: it is found, whitespace aside, in the
file's own text. The validator still checks every quote against its block, and still rejects one
that is not there."""
from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from rag.answer import AnswerPayload, CitationItem, CitationValidator
from rag.answer.report import resolve_citation
from rag.config import load_config
from rag.context.builder import ContextBlock
from rag.documents.files import read_file
from rag.pipeline import Pipeline
from rag.text.lexical import find_quote, quote_found, unmark
from tests.conftest import write_config

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
DOCX_PARAGRAPHS = ("휴가 규정", "제3조(연차휴가)", "① 직원에게는 1년에 15일의 유급 연차휴가를 준다.",
                   "② 연차휴가는 1년 동안 쓰지 아니하면 소멸한다.")


def flat(text: str) -> str:
    """A file's text compared whitespace aside (a print wraps lines where the loader joins them)."""
    return "".join(unicodedata.normalize("NFC", text).split())


def pdf_text(path: Path) -> str:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(path))
    try:
        return "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    finally:
        pdf.close()


def write_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_heading(DOCX_PARAGRAPHS[0], 1)
    d.add_heading(DOCX_PARAGRAPHS[1], 2)
    for p in DOCX_PARAGRAPHS[2:]:
        d.add_paragraph(p)
    d.save(str(path))


@pytest.fixture(scope="module")
def statutes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quotes")
    folder = tmp / "laws"
    folder.mkdir()
    (folder / "statute_3p.pdf").write_bytes((FILES / "statute_3p.pdf").read_bytes())
    write_docx(folder / "leave.docx")
    p = Pipeline(load_config(write_config(tmp, corpus={"paths": [str(folder)], "format": "folder"},
                                          gate={"fallback_threshold": -1.0})))
    p.build_index()
    return p, folder


@pytest.mark.parametrize("file,question,needle", [
    ("statute_3p.pdf", "측정 결과 기록은 몇 년 동안 보존해야 하나요?", "3년 동안 보존하여야"),
    ("leave.docx", "직원의 유급 연차휴가는 1년에 며칠인가요?", "15일의 유급 연차휴가"),
])
def test_a_quote_from_a_pdf_or_docx_statute_is_the_files_text_without_bold(statutes, file, question, needle):
    p, folder = statutes
    assert "**①**" in read_file(folder / file).extracted.text  # the indexed text keeps statute markdown
    res = p.answer(question)
    assert res.status == "answered", res.reason
    cites = [c for c in res.citations if c.file == file and needle in c.quote]
    assert cites, [(c.file, c.quote) for c in res.citations]
    printed = flat(pdf_text(folder / file) if file.endswith(".pdf") else "\n".join(DOCX_PARAGRAPHS))
    for c in cites:
        assert "**" not in c.quote and c.quote.startswith("①")
        assert flat(c.quote) in printed  # a user searching the file finds it
        assert "**" not in res.to_json()["citations"][res.citations.index(c)]["quote"]
    assert "**" not in res.answer


def test_the_shown_quote_keeps_its_span_page_and_locator_in_the_indexed_text():
    text = "**①** 출장자는 2주일 이내에 정산을 신청하여야 한다.\n\n**②** 공용의 차량을 이용하면 운임을 지급하지 아니한다."
    block = ContextBlock("S1", "travel:1:0", "travel", "1", text, 100, 100 + len(text), False, 40, 1.0, 1,
                         title="여비 규정", locator="제8조")
    for quote in ("**②** 공용의 차량을 이용하면", "② 공용의 차량을 이용하면"):  # as indexed (an old index) or as printed
        r = resolve_citation(block, "운임은 없다.", quote)
        assert r.quote == "② 공용의 차량을 이용하면"
        assert r.locator == "제8조제2항"
        assert text[r.quote_start - 100:r.quote_end - 100] == "**②** 공용의 차량을 이용하면"


def test_the_validator_accepts_the_quote_as_printed_or_as_indexed_and_rejects_one_not_in_the_block():
    text = "**①** 출장자는 2주일 이내에 정산을 신청하여야 한다.\n\n**②** 공용의 차량을 이용하면 운임을 지급하지 아니한다."
    source_map = {"S1": ContextBlock("S1", "travel:1:0", "travel", "1", text, 0, len(text), False, 40, 1.0, 1,
                                     title="여비 규정", locator="제8조")}
    claim = "출장자는 2주일 이내에 정산을 신청하여야 한다."

    def check(quote: str):
        return CitationValidator().validate(AnswerPayload(status="answered", answer=f"{claim} [S1]", citations=(
            CitationItem(source_id="S1", claim=claim, quote=quote),)), source_map)

    for quote in ("**①** 출장자는 2주일 이내에", "① 출장자는 2주일 이내에"):
        r = check(quote)
        assert r.ok, r.violations
        assert r.resolved[0].quote == "① 출장자는 2주일 이내에"
        assert check(r.resolved[0].quote).ok  # what the user reads validates again
    for quote in ("② 출장자는 2주일 이내에", "① 출장자는 3주일 이내에", "③ 출장자는", "출장자는 2주일 안에"):
        assert "quote_not_found" in check(quote).codes, quote


def test_unmark_and_find_quote_touch_only_the_bold_around_a_paragraph_mark():
    assert unmark("**①** 같은 곳에 **중요** 1\\. 호") == "① 같은 곳에 **중요** 1\\. 호"
    assert find_quote("① 같은 곳에", "x\n**①** 같은 곳에") == (2, 13)
    assert find_quote("② 같은 곳에", "**①** 같은 곳에") is None and find_quote("", "**①**") is None
    assert quote_found("① 같은 곳에", "**①** 같은 곳에") and quote_found("**①** 같은", "① 같은 곳에")
    assert not quote_found("중요", "**①** 같은 곳에") and not quote_found("① 같은곳에 둘", "**①** 같은 곳에")
