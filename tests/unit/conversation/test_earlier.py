"""What the previous answer cited, read for a follow-up's search (rag.conversation.earlier): its
citations when the turn carries them, else the articles its text names after an indexed title."""
from __future__ import annotations

import pytest

from rag.conversation import earlier_evidence, named_articles
from rag.lang.ko.statute import citation_parts
from rag.types import EarlierEvidence, Turn, citation_ids, turns_from_json, with_previous_citations

TITLES = {"공무원수당등에관한규정": "공무원수당 등에 관한 규정", "주택임대차보호법": "주택임대차보호법",
          "주택임대차보호법-시행령": "주택임대차보호법 시행령", "국가공무원법": "국가공무원법"}


def test_an_article_after_a_title_is_read_spaces_and_brackets_ignored():
    assert named_articles("월 80퍼센트를 받습니다(공무원수당 등에 관한 규정 제11조의3제1항).", TITLES) == (
        ("공무원수당등에관한규정", "제11조의3제1항"),)
    assert named_articles("「주택임대차보호법」 제7조제2항에 따라 증액은 제한됩니다.", TITLES) == (
        ("주택임대차보호법", "제7조제2항"),)


def test_the_longest_title_wins_so_a_decree_is_not_read_as_its_law():
    assert named_articles("(주택임대차보호법 시행령 제11조제3호)", TITLES) == (("주택임대차보호법-시행령", "제11조제3호"),)


def test_an_article_without_an_indexed_name_before_it_is_not_read():
    assert named_articles("같은 법 제3조와 제5조에 따라 지급합니다; 근로기준법 제60조도 보세요.", TITLES) == ()


def test_a_turns_citations_win_over_the_laws_its_text_quotes():
    quoted = "「국가공무원법」 제71조제2항제4호에 따른 사유로 휴직한 공무원은 …"
    history = [Turn("user", "육아휴직수당은?"), Turn("assistant", quoted, ("공무원수당등에관한규정:1:72",))]
    assert earlier_evidence(history, TITLES) == EarlierEvidence(evidence_ids=("공무원수당등에관한규정:1:72",))
    assert earlier_evidence([Turn("user", "육아휴직수당은?"), Turn("assistant", quoted)], TITLES).articles == (
        ("국가공무원법", "제71조제2항제4호"),)
    assert not earlier_evidence([Turn("user", "육아휴직수당은?")], TITLES)


def test_evidence_ids_name_their_documents():
    ev = EarlierEvidence(evidence_ids=("a:b:1:2", "hr:2024:3"), articles=(("law", "제1조"),))
    assert ev.document_ids == ("a:b", "hr", "law")


def test_citation_labels_are_read_into_units():
    assert citation_parts("제11조의3제1항제2호") == ("제11조의3", "1항", "2호")
    assert citation_parts("제 5 조") == ("제5조",)
    assert citation_parts("제17조제1호라목") == ("제17조", "1호", "라목")
    assert citation_parts("Travel > Per diem") == ()


def test_citations_travel_on_assistant_turns_only():
    turns = turns_from_json([{"role": "user", "content": "q"},
                             {"role": "assistant", "content": "a", "citations": ["d:1:0", {"evidence_id": "d:1:2"}]}])
    assert turns[1].citations == ("d:1:0", "d:1:2")
    with pytest.raises(ValueError, match="only an assistant turn"):
        turns_from_json([{"role": "user", "content": "q", "citations": ["d:1:0"]}])
    with pytest.raises(ValueError, match=r"history\[1\].citations\[0\]"):
        turns_from_json([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "citations": [3]}])
    with pytest.raises(ValueError, match="only an assistant turn"):
        Turn("user", "q", ("d:1:0",))
    with pytest.raises(ValueError, match="evidence ids"):
        Turn("assistant", "a", "d:1:0")  # type: ignore[arg-type]


def test_previous_citations_join_the_last_assistant_turn():
    history = (Turn("user", "q1"), Turn("assistant", "a1", ("d:1:0",)), Turn("user", "q2"))
    out = with_previous_citations(history, citation_ids(["d:1:5", {"evidence_id": "d:1:0"}], "previous_citations"))
    assert out[1] == Turn("assistant", "a1", ("d:1:0", "d:1:5")) and out[0] == history[0] and out[2] == history[2]
    assert with_previous_citations(history, ()) == history
    with pytest.raises(ValueError, match="assistant turn"):
        with_previous_citations((Turn("user", "q1"),), ("d:1:0",))


def test_a_second_reference_belongs_to_the_law_named_before_it():
    assert named_articles("주택임대차보호법 제3조 및 제4조에 따라 대항력이 생깁니다.", TITLES) == (
        ("주택임대차보호법", "제3조"), ("주택임대차보호법", "제4조"))
    # "the same law's decree": another document, whose name is not written out: not read
    assert named_articles("주택임대차보호법 제3조와 같은 법 시행령 제2조", TITLES) == (("주택임대차보호법", "제3조"),)
