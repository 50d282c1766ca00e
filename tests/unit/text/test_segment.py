"""The structure-aware segmenter: statute structure (markdown and plain hard-wrapped), dates,
decimals, abbreviations, items, notes, locators and safe cut points."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.text import Locator, has_structure, locate, refine_locator, safe_cuts, segment
from rag.text.sentences import answer_sentences, marker_ids, split_sentences

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "statutes"
PLAIN = (FIXTURES / "seed002_plain.txt").read_text(encoding="utf-8")
MARKDOWN = (FIXTURES / "travel_expenses.md").read_text(encoding="utf-8")
FORMULA = (FIXTURES / "allowances_art7.md").read_text(encoding="utf-8")

PROPS = settings(max_examples=int(os.environ.get("RAG_PROPS_EXAMPLES", "200")), deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


def texts(t: str, **kw) -> list[str]:
    return [s.text for s in segment(t, **kw)]


def unit_at(t: str, needle: str):
    off = t.index(needle) + len(needle) - len(needle.lstrip())
    return next(s for s in segment(t) if s.start <= off < s.end)


# --------------------------------------------------------------------------- plain hard-wrapped statute (seed 002)
def test_plain_statute_units_follow_articles_paragraphs_and_items():
    segs = segment(PLAIN)
    heads = [(s.kind, s.label) for s in segs if s.kind in ("article", "paragraph", "item")]
    assert heads[:8] == [("article", "제619조의2"), ("paragraph", "①"), ("paragraph", "②"), ("item", "1."),
                         ("item", "2."), ("item", "3."), ("item", "4."), ("paragraph", "③")]
    assert ("article", "제629조") in heads and ("article", "제618조") in heads
    title = next(s for s in segs if s.label == "제619조의2")
    assert title.text == "제619조의2(산소 및 유해가스 농도의 측정 및 기록 등)" and title.level == 0
    assert unit_at(PLAIN, "1. 밀폐공간의 위험성").text == "1. 밀폐공간의 위험성"


@pytest.mark.parametrize("left,right", [("무선설비 또", "\n는 무선통신"), ("<개정 2024. 6.", " 28., 2025"),
                                        ("3년간", "\n보존해야"), ("2017. 3.", "\n3.>")])
def test_hard_wraps_notes_and_dates_are_never_cut(left, right):
    joint = PLAIN.index(left + right) + len(left)
    unit = unit_at(PLAIN, left + right)
    assert unit.start < joint < unit.end  # one unit holds both sides, verbatim (newline kept)
    assert PLAIN[unit.start:unit.end] == unit.text
    for level in ("sentence", "clause", "word"):
        assert joint not in safe_cuts(PLAIN, level)


def test_no_safe_cut_falls_inside_a_note_bracket_or_date():
    for level in ("sentence", "clause", "word"):
        for c in safe_cuts(PLAIN, level):
            head = PLAIN[:c]
            assert head.rfind("<") <= head.rfind(">"), (level, head[-30:])  # not inside <개정 …>
            assert head.count("(") - head.count(")") in (0,) or head.rfind("(") < head.rfind(")"), head[-30:]
            assert not (head.endswith(("2024.", " 6.", "2017. 3.")) and PLAIN[c:c + 2].strip()[:1].isdigit())
            assert not PLAIN[c - 1].isspace()


def test_notes_stay_with_the_sentence_before_them():
    para4 = unit_at(PLAIN, "④ 사업주는")
    assert para4.text.endswith("[본조신설 2017. 3. 3.]\n[제목개정 2025. 12. 1.]")
    para1 = unit_at(PLAIN, "① 사업주는 근로자가 탱크")
    assert para1.text.endswith("<개정 2012. 3. 5., 2015. 12. 31., 2017. 3.\n3.>")
    lead = unit_at(PLAIN, "이 장에서 사용하는 용어의 뜻은")
    assert lead.text == "이 장에서 사용하는 용어의 뜻은 다음과 같다. <개정 2017. 3. 3., 2023. 11. 14.>"
    assert not any(s.kind == "note" for s in segment(PLAIN))


def test_plain_statute_locators():
    at = lambda needle: locate(PLAIN, PLAIN.index(needle)).label  # noqa: E731
    assert at("제619조의2(산소") == "제619조의2"
    assert at("① 사업주는 밀폐공간에서") == "제619조의2제1항"
    assert at("무선설비 또") == "제619조의2제1항"
    assert at("2. 측정장비의") == "제619조의2제2항제2호"
    assert at("④ 사업주는") == "제619조의2제4항"
    assert at("2. 제1호에 따른 환기") == "제629조제1항제2호"
    assert at("3. “적정공기”란") == "제618조제3호"
    assert locate(PLAIN, 0) == Locator()  # the page tag before the first article
    assert has_structure(PLAIN)


def test_page_tags_and_decimals_in_plain_statute():
    assert "[a-629 | PDF 114]" in texts(PLAIN)
    item3 = unit_at(PLAIN, "3. “적정공기”란")
    assert "23.5퍼센트 미만, 이산화탄소의 농도가 1.5퍼센트 미만, 일산화탄\n소의 농도가" in item3.text


# --------------------------------------------------------------------------- markdown statute (kolaw-dev)
def test_markdown_statute_headings_articles_and_paths():
    segs = segment(MARKDOWN)
    assert (segs[0].kind, segs[0].text, segs[0].path) == ("heading", "# 공무원 여비 규정", ("공무원 여비 규정",))
    chapter = unit_at(MARKDOWN, "## 제1장 총칙")
    assert (chapter.kind, chapter.label, chapter.level) == ("heading", "제1장", 0)
    art = unit_at(MARKDOWN, "##### 제8조의2 (여비의 결제와 정산 등)")
    assert (art.kind, art.label) == ("article", "제8조의2")
    assert art.path == ("공무원 여비 규정", "제1장 총칙", "제8조의2 (여비의 결제와 정산 등)")
    p2 = unit_at(MARKDOWN, "**②** 국내 여행자 및 국외 여행자는")
    assert (p2.kind, p2.label) == ("paragraph", "②")
    assert p2.text.endswith("2주일 이내에, 운임과 숙박비의 세부 사용내용을 확인할 수 있는 증거서류를 갖추어 회계 관계 공무원에게 "
                            "운임과 숙박비의 정산을 신청하여야 한다.")
    but = unit_at(MARKDOWN, "다만, 국외 여행자의 숙박비")
    assert but.text.endswith("연장할 수 있다. <개정 2011.2.9, 2013.3.23, 2014.11.19, 2017.1.31>")  # note attached
    item = unit_at(MARKDOWN, "  1\\. 철도운임에 2등급")
    assert (item.kind, item.label, item.text) == ("item", "1.", "1\\. 철도운임에 2등급 이상의 등급 구별이 있는 경우: 최상 등급의 철도운임")
    later = unit_at(MARKDOWN, "##### 제9조 (운임의 구분)")
    assert later.path == ("공무원 여비 규정", "제2장 운임", "제9조 (운임의 구분)")  # a new chapter replaces the old


def test_markdown_statute_locators():
    at = lambda needle: locate(MARKDOWN, MARKDOWN.index(needle))  # noqa: E731
    assert at("**②** 국내 여행자 및 국외 여행자는").label == "제8조의2제2항"
    assert at("국외 여행자의 숙박비 정산 신청기한").label == "제8조의2제2항"
    assert at("2\\. 철도운임에 등급 구별이 없는").label == "제10조제2항제2호"
    assert at("## 제2장 운임").label == ""  # between articles: a chapter heading only
    assert at("## 제2장 운임").path == ("공무원 여비 규정", "제2장 운임")
    assert at("삭제 <2007.11.13>").label == "제14조"


def test_formula_block_lines_are_units_and_stay_in_their_paragraph():
    segs = segment(FORMULA)
    box = [s for s in segs if "│" in s.text or "┌" in s.text]
    assert box and all(locate(FORMULA, s.start).label == "제7조제2항" for s in box)
    assert unit_at(FORMULA, "<img src=").text.startswith("<img src=")


def test_markdown_document_headings_and_hard_wrapped_prose():
    doc = ("# Guide\n\n## Travel\n\n### Per diem\n\nThe daily allowance is 30,000 KRW for trips longer than\n"
           "four hours, e.g. a visit to the Busan plant. Dr. Lee approves it.\n")
    assert texts(doc) == ["# Guide", "## Travel", "### Per diem",
                          "The daily allowance is 30,000 KRW for trips longer than\nfour hours, e.g. a visit to the "
                          "Busan plant.", "Dr. Lee approves it."]
    assert locate(doc, doc.index("The daily")).path == ("Guide", "Travel", "Per diem")
    assert locate(doc, doc.index("The daily")).describe() == "Guide > Travel > Per diem"


# --------------------------------------------------------------------------- sentences
@pytest.mark.parametrize("text,expected", [
    ("개정 2024. 6. 28. 이후 적용된다. 다음 문장.", ["개정 2024. 6. 28. 이후 적용된다.", "다음 문장."]),
    ("산소 농도는 18퍼센트 이상 23.5퍼센트 미만이어야 한다. 측정은 3.5 bar에서 한다.",
     ["산소 농도는 18퍼센트 이상 23.5퍼센트 미만이어야 한다.", "측정은 3.5 bar에서 한다."]),
    ("Pumps stop at 88. The valve opens at 3.5 bar, e.g. in tests. Call Dr. Lee at 9 a.m. tomorrow. Thomas K. Arnold agreed.",
     ["Pumps stop at 88.", "The valve opens at 3.5 bar, e.g. in tests.", "Call Dr. Lee at 9 a.m. tomorrow.",
      "Thomas K. Arnold agreed."]),
    ("It was odd (very odd.) Then it ended.", ["It was odd (very odd.)", "Then it ended."]),
    ("작업을 시작(작업을 일시 중단한 경우를 포함한다. 이하 같다)하기 전에 측정한다.",
     ["작업을 시작(작업을 일시 중단한 경우를 포함한다. 이하 같다)하기 전에 측정한다."]),
    ("다음 각 호와 같다.\n가. 첫째\n나. 둘째\n1의2. 셋째", ["다음 각 호와 같다.", "가. 첫째", "나. 둘째", "1의2. 셋째"]),
    ("다음과 같습니다: 1. 위험성 2. 측정방법", ["다음과 같습니다: 1. 위험성 2. 측정방법"]),
    ("한다. ② 사업주는 보존한다.", ["한다.", "② 사업주는 보존한다."]),
    ("Overview\nRAG(Retrieval-Augmented Generation)는 검색한 외부 근거를 생성 모델의 입력에 포함하는 구조다.",
     ["Overview", "RAG(Retrieval-Augmented Generation)는 검색한 외부 근거를 생성 모델의 입력에 포함하는 구조다."]),
    ("| 항목 | 값 |\n|---|---|\n| 온도 | 88 |", ["| 항목 | 값 |", "|---|---|", "| 온도 | 88 |"]),
])
def test_sentence_rules(text, expected):
    assert texts(text) == expected
    assert [s.text for s in split_sentences(text)] == expected


def test_single_newline_is_a_boundary_only_in_newline_mode_and_never_inside_brackets():
    wrapped = ("사업주는 밀폐공간에서 근로자에게 작업을 하도록 하는 경우 작업을 시작하기 전에 밀폐공간의 산소 및\n"
               "유해가스 농도를 측정하여 적정공기가 유지되고 있는지를 평가하도록 해야 한다.")
    assert texts(wrapped) == [wrapped]
    assert len(texts(wrapped, newlines=True)) == 2
    note = "조치를 하여야 한다. <개정 2017. 3.\n3.> [S1]\n다음 줄 [S2]"
    assert texts(note, newlines=True) == ["조치를 하여야 한다. <개정 2017. 3.\n3.> [S1]", "다음 줄 [S2]"]


def test_segments_carry_levels():
    t = "##### 제5조 (예시)\n\n**①** 첫 문장이다. 둘째 문장이다.\n\n  1\\. 항목\n    가\\. 세부\n\n**②** 끝."
    got = [(s.kind, s.label, s.level) for s in segment(t)]
    assert got == [("article", "제5조", 0), ("paragraph", "①", 1), ("sentence", "", 4), ("item", "1.", 2),
                   ("item", "가.", 3), ("paragraph", "②", 1)]
    assert locate(t, t.index("가\\.")).label == "제5조제1항제1호가목"


def test_locator_label_forms():
    assert Locator(article="제16조", paragraph="①").label == "제16조제1항"
    assert Locator(article="제3조", paragraph="⑫", item="1의2.", subitem="나.").label == "제3조제12항제1호의2나목"
    assert Locator(path=("A", "B")).label == "" and Locator(path=("A", "B")).describe() == "A > B"


@pytest.mark.parametrize("base,text,needle,expected", [
    ("제10조제2항", "**②** 국외 철도운임은 다음 각 호와 같다.\n\n  1\\. 첫째 경우\n  2\\. 둘째 경우", "둘째", "제10조제2항제2호"),
    ("제10조제2항", "**②** 국외 철도운임은 다음 각 호와 같다.", "철도", "제10조제2항"),
    ("제8조의2제2항", "다만, 연장할 수 있다.\n\n**③** 정산하여야 한다.", "정산", "제8조의2제3항"),
    ("제10조", "다만, 그렇지 않다.\n1. 항목", "항목", "제10조제1호"),
    ("제7조제21항제3호", "다만, 그렇다.", "그렇다", "제7조제21항제3호"),
    ("제1조~제3조", "##### 제2조 (목적)\n\n본문이다.", "본문", "제2조"),
    ("Travel > Per diem", "The allowance is paid.", "paid", "Travel > Per diem"),
])
def test_refine_locator_inside_a_chunk(base, text, needle, expected):
    assert refine_locator(base, text, text.index(needle)) == expected


# --------------------------------------------------------------------------- answers
def test_answer_fragments_never_lose_their_markers():
    # the extractive generator writes one flattened unit per line, each with its marker
    answer = "\n".join(" ".join(s.text.split()) + " [S1]" for s in split_sentences(PLAIN))
    got = answer_sentences(answer)
    assert len(got) == len(split_sentences(PLAIN))
    assert all(marker_ids(s.text) == ("S1",) for s in got)
    # enumerator, note and closer fragments join a neighbour instead of standing alone
    frag = "사업주는 조치를 하여야 한다 [S1].\n<개정 2024. 6. 28.>\n1.\n작업장소를 환기할 것 [S2]\n)."
    assert [s.text for s in answer_sentences(frag)] == [
        "사업주는 조치를 하여야 한다 [S1].\n<개정 2024. 6. 28.>", "1.\n작업장소를 환기할 것 [S2]\n)."]
    flat = "다음 각 호의 조치를 하여야 한다. <개정 2012. 3. 5., 2017. 3. 3.> [S1] 1. 작업장소는 환기할 것 [S1]"
    assert [s.text for s in answer_sentences(flat)] == [
        "다음 각 호의 조치를 하여야 한다. <개정 2012. 3. 5., 2017. 3. 3.> [S1]", "1. 작업장소는 환기할 것 [S1]"]


# --------------------------------------------------------------------------- properties
_pieces = st.sampled_from([
    "제3조(목적)", "제12조의2(정의) ", "## 제1장 총칙", "##### 제8조의2 (정산)", "**①**", "② ", "1. ", "  1\\. ", "가. ",
    "<개정 2024. 6. 28.>", "[본조신설 2017. 3. 3.]", "2024. 6.", " 28.", "23.5", "e.g.", "Dr.", "한다.", "것",
    "무선설비 또", "는", "(포함한다. 이하 같다)", "「전파법」", "[S1]", "- ", "| a | b |", "Hello world.", "and",
])
_seps = st.sampled_from([" ", " ", "\n", "\n\n", "", "\t", "\f", "\r\n"])


@st.composite
def statute_soup(draw):
    parts = draw(st.lists(st.tuples(_pieces, _seps), max_size=30))
    return "".join(p + s for p, s in parts)


@PROPS
@given(st.one_of(statute_soup(), st.text(max_size=200)), st.booleans())
def test_segments_are_exact_ordered_and_cover_every_visible_character(text, newlines):
    segs = segment(text, newlines)
    assert all(text[s.start:s.end] == s.text and s.text == s.text.strip() and s.text for s in segs)
    assert all(a.end <= b.start for a, b in itertools.pairwise(segs))
    assert "".join(text.split()) == "".join("".join(s.text for s in segs).split())
    assert segment(text, newlines) == segs  # deterministic (and cached)


@PROPS
@given(st.one_of(statute_soup(), st.text(max_size=200)))
def test_safe_cuts_are_nested_and_end_on_visible_text(text):
    sent, clause, word = (set(safe_cuts(text, lv)) for lv in ("sentence", "clause", "word"))
    assert sent <= clause <= word
    assert all(0 < c <= len(text) and not text[c - 1].isspace() for c in word)
    assert all(c == len(text) or text[c].isspace() for c in word - clause)  # word cuts sit on whitespace


def test_safe_cuts_rejects_an_unknown_level():
    with pytest.raises(ValueError, match="level"):
        safe_cuts("abc", "paragraph")  # type: ignore[arg-type]
