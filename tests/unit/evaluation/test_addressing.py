"""eval_addressing: gold answers validated for their own question, for another question, and as paraphrases
(rag.evaluation.addressing)."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from rag.config import RagConfig
from rag.errors import DatasetError
from rag.evaluation.addressing import (
    AddressingReport,
    clean_line,
    eval_addressing,
    gold_answer,
    gold_paragraph,
    quote_lines,
    with_markers,
)
from rag.evaluation.answer_dataset import current_documents, load_answer_dataset
from rag.text.sentences import answer_sentences, marker_ids
from tests.unit.evaluation.addressing_data import Q_R3, Q_T1, Q_T3, QUESTIONS, RENT, TRAVEL, write_dataset


# -- gold answers ----------------------------------------------------------------------
def test_clean_line_removes_markup_notes_and_the_leading_enumerator():
    assert clean_line("  1\\. 서울특별시: 1억6천500만원 <개정 2023.2.21>") == "서울특별시: 1억6천500만원"
    assert clean_line("**②** 법 제7조의2제2호에서 \"이율\"이란 연 2퍼센트를 말한다.") == (
        "법 제7조의2제2호에서 \"이율\"이란 연 2퍼센트를 말한다.")
    assert clean_line("가\\. 재직기간이 10년 이상인 공무원:   5일") == "재직기간이 10년 이상인 공무원: 5일"
    assert clean_line("다음 각 호의 금액 1\\. 이하로 한다") == "다음 각 호의 금액 1. 이하로 한다"  # only at the start
    assert clean_line("<신설 2025.7.22>") == ""


def test_quote_lines_keep_each_line_verbatim_beside_its_answer_form():
    quote = "다음 각 호의 구분에 의한 금액 이하로 한다. <개정 2023.2.21>\n\n  1\\. 서울특별시: 5천500만원\n<신설 2024.1.1>\n"
    assert quote_lines(quote) == (("다음 각 호의 구분에 의한 금액 이하로 한다.",
                                   "다음 각 호의 구분에 의한 금액 이하로 한다. <개정 2023.2.21>"),
                                  ("서울특별시: 5천500만원", "1\\. 서울특별시: 5천500만원"))


def test_with_markers_puts_a_marker_after_every_sentence():
    out = with_markers("장기재직휴가를 주어야 한다. 이 경우 산정은 제15조에 따른다.")
    assert out == "장기재직휴가를 주어야 한다. [S1] 이 경우 산정은 제15조에 따른다. [S1]"
    assert [marker_ids(s.text) for s in answer_sentences(out)] == [("S1",), ("S1",)]
    assert with_markers("첫 줄이다.\n둘째 줄") == "첫 줄이다. [S1]\n둘째 줄 [S1]"


def test_gold_paragraph_is_the_text_between_the_blank_lines_around_the_quote():
    text = "# 제목\n\n앞 문단.\n\n**①** 가 나 다 라. 마 바.\n \n뒤 문단."
    start, end = gold_paragraph(text, "다 라")
    assert text[start:end] == "**①** 가 나 다 라. 마 바."
    start, end = gold_paragraph(text, "마 바.\n \n뒤")  # a quote across a blank line: both paragraphs
    assert text[start:end] == "**①** 가 나 다 라. 마 바.\n \n뒤 문단."
    assert text[slice(*gold_paragraph(text, "# 제목"))] == "# 제목"
    assert gold_paragraph(text, "없는 말") is None and gold_paragraph(text, "") is None


def test_gold_answer_uses_the_current_version_and_a_paragraph_block(tmp_path):
    data = load_answer_dataset(write_dataset(tmp_path / "ds"))
    docs = current_documents(data)
    assert {k: d.version for k, d in docs.items()} == {"rent": "1", "travel": "2"}
    t1, t3 = data.questions[0], data.questions[2]
    g = gold_answer(t1, docs["travel"])
    assert g.block_kind == "paragraph" and g.block.source_id == "S1"
    assert g.block.text == "**①** " + Q_T1 + ". <개정 2024.1.2>"
    assert TRAVEL[g.block.start_char:g.block.end_char] == g.block.text
    assert (g.block.document_id, g.block.document_version, g.block.uri, g.block.title) == (
        "travel", "2", "u:travel-2", "여비 규정")
    assert g.block.locator == "제8조제1항"
    assert g.answer == Q_T1 + " [S1]" and g.citations == ((Q_T1, Q_T1),)
    g3 = gold_answer(t3, docs["travel"])  # a quote with a list: one answer line and one citation per item
    assert g3.answer == "숙박비는 다음 각 호의 구분에 따라 지급한다. [S1]\n서울특별시: 10만원 [S1]"
    assert [q for _, q in g3.citations] == ["숙박비는 다음 각 호의 구분에 따라 지급한다.", "1\\. 서울특별시: 10만원"]
    assert g3.block.text.endswith("2\\. 광역시: 8만원") and g3.quote == Q_T3
    missing = gold_answer(t1, None)  # no document: the block is the quote
    assert missing.block_kind == "quote" and missing.block.text == Q_T1 and missing.block.document_version == ""
    with pytest.raises(ValueError, match="'nq' has none"):
        gold_answer(data.questions[7], docs["rent"])  # no gold quote


# -- pairing and counting, with a scripted validator ----------------------------------------
@dataclass(frozen=True)
class _Violation:
    code: str


@dataclass(frozen=True)
class _Report:
    violations: tuple[_Violation, ...]


class ScriptedValidator:
    """Rejects (``does_not_address``) an answer whose block is not from the question's gold document,
    and (``unsupported_sentence``) any travel answer for ``reject_for``; records every call."""

    def __init__(self, gold_doc: dict[str, str], reject_for: str) -> None:
        self.gold_doc = gold_doc
        self.reject_for = reject_for
        self.calls: list[tuple[str, str, str, str]] = []  # (question, answer, block document, block text)

    def validate(self, payload, source_map, *, question=None):
        block = source_map["S1"]
        self.calls.append((question, payload.answer, block.document_id, block.text))
        codes = []
        if block.document_id != self.gold_doc[question]:
            codes.append("does_not_address")
        if question == self.reject_for and block.document_id == "travel":
            codes.append("unsupported_sentence")
        return _Report(tuple(_Violation(c) for c in codes))


@pytest.fixture
def scripted(tmp_path):
    root = write_dataset(tmp_path / "ds")
    by_id = {q["id"]: q for q in QUESTIONS}
    validator = ScriptedValidator({q["question"]: q["gold"]["doc_id"] for q in QUESTIONS if q["answerable"]},
                                  by_id["t2"]["question"])
    return root, validator, eval_addressing(root, RagConfig(), validator=validator)


def test_pairs_matched_mismatched_and_paraphrased(scripted):
    _, validator, rep = scripted
    assert [(c.question_id, c.answer_from) for c in rep.of("matched")] == [
        (q, q) for q in ("t1", "t2", "t3", "t4", "r1", "r2", "r3")]  # nq has no quote, u1 is unanswerable
    mism = [(c.question_id, c.answer_from) for c in rep.of("mismatched")]
    assert len(mism) == 38  # 7 x 6 ordered pairs, less r1/r2 (same article) and t3/t4 (nested quotes), both ways
    assert ("r1", "r2") not in mism and ("t3", "t4") not in mism and ("t4", "t3") not in mism
    assert mism[:6] == [("t1", "t2"), ("t1", "t3"), ("t1", "t4"), ("t1", "r1"), ("t1", "r2"), ("t1", "r3")]
    assert rep.left_out == (("t3", "t4"), ("t4", "t3")) and rep.skipped == ("nq",)
    assert len(rep.of("mismatched", True)) == 14 and len(rep.of("mismatched", False)) == 24
    assert {c.same_doc for c in rep.of("mismatched", True) if c.question_id.startswith("t")} == {True}
    assert [(c.question_id, c.answer_from) for c in rep.of("paraphrased")] == [("t1", "c1"), ("r1", "c3"), ("r2", "c3")]
    assert len(validator.calls) == len(rep.cases) == 7 + 38 + 3
    # the mismatched answer of r3 for t1: t1's question, r3's answer and r3's block
    question, answer, doc, block = validator.calls[7 + 5]
    assert question == QUESTIONS[0]["question"] and answer == Q_R3 + " [S1]" and doc == "rent"
    assert block == RENT.split("\n\n")[-1].strip()
    # a paraphrase: the claim as the answer, over the question's block
    question, answer, doc, block = validator.calls[-3]
    assert answer == "출장자는 여행을 마친 날부터 2주일 안에 정산을 신청해야 한다. [S1]" and block.startswith("**①** 출장자는")


def test_counts_codes_and_failures(scripted):
    _, _, rep = scripted
    shares = {k: (v.k, v.n, v.rate) for k, v in rep.shares.items()}
    assert shares == {
        "matched_accepted": (6, 7, round(6 / 7, 6)),  # t2's own answer rejected
        "mismatched_rejected": (27, 38, round(27 / 38, 6)),
        "mismatched_rejected_same_doc": (3, 14, round(3 / 14, 6)),  # only t1, t3, t4's answers for t2
        "mismatched_rejected_other_doc": (24, 24, 1.0),
        "paraphrase_accepted": (3, 3, 1.0),
    }
    assert rep.codes == {"matched": {"unsupported_sentence": 1},
                         "mismatched": {"does_not_address": 24, "unsupported_sentence": 3}, "paraphrased": {}}
    fails = rep.failures
    assert len(fails) == 1 + 11 and fails[0].kind == "matched" and fails[0].question_id == "t2"
    assert all(f.kind == "mismatched" and f.same_doc and f.accepted for f in fails[1:])


def test_report_json_has_every_pair(scripted):
    _, _, rep = scripted
    out = json.loads(json.dumps(rep.to_json(), ensure_ascii=False))
    assert len(out["cases"]) == 48 and out["n_failures"] == 12
    assert out["metrics"]["mismatched_rejected"] == {"k": 27, "n": 38, "share": round(27 / 38, 6)}
    first = out["cases"][0]
    assert first == {"kind": "matched", "question_id": "t1", "answer_from": "t1", "expected": "accepted",
                     "accepted": True, "ok": True, "codes": []}
    assert out["cases"][7]["same_doc"] is True and out["cases"][7]["expected"] == "rejected"
    assert out["answers"]["t3"].endswith("서울특별시: 10만원 [S1]") and set(out["claims"]) == {"c1", "c3"}
    assert out["blocks"] == {q: "paragraph" for q in ("t1", "t2", "t3", "t4", "r1", "r2", "r3")}
    assert out["left_out"] == [["t3", "t4"], ["t4", "t3"]] and out["skipped"] == ["nq"]


def test_empty_groups_have_no_share(tmp_path):
    root = write_dataset(tmp_path / "ds", QUESTIONS[:1], claims=None)  # one question, no claims file
    rep = eval_addressing(root, RagConfig(), validator=ScriptedValidator({QUESTIONS[0]["question"]: "travel"}, ""))
    assert isinstance(rep, AddressingReport) and len(rep.cases) == 1
    assert rep.shares["mismatched_rejected"].rate is None and rep.shares["paraphrase_accepted"].n == 0


def test_claims_path_must_exist(tmp_path):
    root = write_dataset(tmp_path / "ds")
    with pytest.raises(DatasetError, match="claims file not found"):
        eval_addressing(root, RagConfig(), claims_path=tmp_path / "nope.jsonl")


# -- with the real validator ----------------------------------------------------------------
def test_gold_answers_pass_every_check_but_the_question_check(tmp_path):
    """The gold answers are well formed: markers, quotes and support hold. Only ``does_not_address``
    (whether the answer fits the question) may reject a matched answer or a paraphrase."""
    rep = eval_addressing(write_dataset(tmp_path / "ds"), RagConfig())
    for case in rep.of("matched") + rep.of("paraphrased"):
        assert set(case.codes) <= {"does_not_address"}, case
    assert len(rep.cases) == 48 and rep.config_hash == RagConfig().hash
