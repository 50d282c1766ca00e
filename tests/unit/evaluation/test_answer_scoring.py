"""Answer precision, answer length and per-style metrics (rag.evaluation.answer_scoring)."""
from __future__ import annotations

import pytest

from rag.evaluation.answer_dataset import AnswerQuestion, Gold
from rag.evaluation.answer_scoring import (
    QUOTE_COVERAGE,
    answer_chars,
    answer_metrics,
    in_gold_quote,
    precise_sentences,
    quote_coverage,
    score_answer,
    sentence_precise,
    style_metrics,
)

QUOTE = ("법 제8조에 따라 우선변제를 받을 임차인은 보증금이 다음 각 호의 구분에 의한 금액 이하인 임차인으로 한다.\n\n"
         "  1\\. 서울특별시: 1억6천500만원")
GOLD = Gold("rent", ("1억6천500만원",), "제11조제1호", QUOTE)
Q = AnswerQuestion("q", "서울 소액임차인 기준은?", True, GOLD, "version")
LATEST = {"rent": "2"}


def test_quote_coverage_by_hand():
    assert quote_coverage("서울특별시: 1억6천500만원 [S1]", QUOTE) == 1.0  # markers, escapes and spaces do not count
    # 10 characters; the 4-character runs ABCD and EFGH occur in the quote: 8 of 10 lie in it
    assert quote_coverage("ABCDxEFGHy", "..ABCD..EFGH..") == 0.8
    assert in_gold_quote("ABCDxEFGHy", "..ABCD..EFGH..") and QUOTE_COVERAGE == 0.8
    assert quote_coverage("ABCDEFGxyz", "..ABCDEFG..") == 0.7 and not in_gold_quote("ABCDEFGxyz", "..ABCDEFG..")
    assert quote_coverage("ABC", "xABx") == 0.0  # shorter than a run and not a substring
    assert quote_coverage("", QUOTE) == 0.0 and quote_coverage("무엇", "") == 0.0


def test_sentence_precise_needs_a_fact_or_the_quote():
    assert sentence_precise("서울은 1억 6천500만원 이하입니다 [S1]", GOLD)  # a gold fact, not in the quote
    assert sentence_precise("법 제8조에 따라 우선변제를 받을 임차인은 보증금이 금액 이하인 임차인으로 한다. [S1]", GOLD)
    assert not sentence_precise("임대인은 계약을 갱신하여야 한다. [S1]", GOLD)
    no_quote = Gold("rent", ("1억6천500만원",))
    assert not sentence_precise("법 제8조에 따라 우선변제를 받을 임차인은 보증금이 다음 각 호의 구분에 의한 금액 이하인 임차인으로 한다.",
                                no_quote)


def test_precise_sentences_split_a_line_into_its_sentences():
    answer = ("서울특별시: 1억6천500만원 [S1]\n"
              "법 제8조에 따라 우선변제를 받을 임차인은 보증금이 금액 이하인 임차인으로 한다. [S1] "
              "임대인은 계약을 갱신하여야 한다. [S1]")
    assert precise_sentences(answer, GOLD) == (True, True, False)


def test_score_answer_keeps_precision_and_sentence_count():
    answer = "서울특별시: 1억6천500만원. [S1] 임대인은 계약을 갱신하여야 한다. [S1] 차임은 5%까지 올린다. [S1]"
    row = score_answer(Q, "answered", answer, [("rent", "2")], LATEST)
    assert row.correct and row.sentences == 3 and row.answer_precision == pytest.approx(1 / 3)
    assert row.to_json()["answer_precision"] == round(1 / 3, 6) and row.to_json()["sentences"] == 3
    abstained = score_answer(Q, "insufficient_evidence", "근거가 부족합니다.", [], LATEST)
    assert abstained.answer_precision is None and abstained.sentences == 0
    una = AnswerQuestion("u", "?", False, None)
    wrong = score_answer(una, "answered", "하나. [S1] 둘. [S1]", [("rent", "2")], LATEST)
    assert wrong.answer_precision is None and wrong.sentences == 2  # no gold to be precise against


def test_answer_metrics_precision_and_length_by_hand():
    rows = [
        score_answer(Q, "answered", "서울특별시: 1억6천500만원 [S1]", [("rent", "2")], LATEST),  # correct, 1/1
        score_answer(Q, "answered", "서울특별시: 1억6천500만원 [S1]\n임대인은 갱신하여야 한다. [S1]", [("rent", "1")],
                     LATEST),  # precision 1/2, not correct (old version cited)
        score_answer(Q, "answered", "임대인은 갱신하여야 한다. [S1]", [("rent", "2")], LATEST),  # 0/1, wrong
        score_answer(Q, "insufficient_evidence", "", [], LATEST),
        score_answer(AnswerQuestion("u", "?", False, None, "near-miss"), "answered", "가나다라마. [S1]", [("rent", "2")],
                     LATEST),
    ]
    m = answer_metrics(rows)
    assert m["answer_precision"] == 0.5  # (1 + 0.5 + 0) / 3 over the answered answerable
    assert m["answer_precision_correct"] == 1.0
    chars = [answer_chars(r.answer) for r in rows if r.answered]
    assert chars == [len("서울특별시: 1억6천500만원"), len("서울특별시: 1억6천500만원 임대인은 갱신하여야 한다."),  # \n: a space
                     len("임대인은 갱신하여야 한다."), len("가나다라마.")]
    assert m["answer_chars_mean"] == round(sum(chars) / 4, 6)
    assert m["answer_chars_p50"] == (sorted(chars)[1] + sorted(chars)[2]) / 2
    assert m["answer_sentences_mean"] == round((1 + 2 + 1 + 1) / 4, 6)
    empty = answer_metrics(rows[3:4])
    assert (empty["answer_precision"], empty["answer_chars_mean"], empty["answer_chars_p50"]) == (None, None, None)


def test_style_metrics_report_every_metric_per_style():
    rows = [
        score_answer(Q, "answered", "서울특별시: 1억6천500만원 [S1]", [("rent", "2")], LATEST),
        score_answer(AnswerQuestion("q2", "?", True, GOLD, "numeric"), "answered", "임대인은 갱신하여야 한다. [S1]",
                     [("rent", "2")], LATEST),
        score_answer(AnswerQuestion("q3", "?", True, GOLD, "numeric"), "insufficient_evidence", "", [], LATEST),
        score_answer(AnswerQuestion("u", "?", False, None, "near-miss"), "insufficient_evidence", "", [], LATEST),
        score_answer(AnswerQuestion("x", "?", True, GOLD), "answered", "x [S1]", [], LATEST),  # no style: left out
    ]
    by_style = style_metrics(rows)
    assert list(by_style) == ["near-miss", "numeric", "version"]
    assert set(by_style["numeric"]) == {"n", "accuracy"} | set(answer_metrics(rows))
    num = by_style["numeric"]
    assert (num["n"], num["accuracy"], num["answered_when_answerable"], num["precision_of_answered"],
            num["answer_precision"]) == (2, 0.0, 0.5, 0.0, 0.0)
    assert by_style["version"]["answer_precision"] == 1.0 and by_style["version"]["accuracy_answerable"] == 1.0
    assert by_style["near-miss"]["abstained_when_unanswerable"] == 1.0 and by_style["near-miss"]["accuracy"] == 1.0


def test_gate_aurocs_rank_the_signal_the_coverage_and_the_signal_with_the_reading():
    from rag.evaluation.answer_scoring import AnswerRow, GateReading, gate_aurocs

    def row(i, answerable, score, coverage, stopped=False):
        return AnswerRow(f"q{i}", answerable, "", "", "", (), (), False, False, False,
                         gate=GateReading(score, coverage, stopped))

    rows = [row(0, True, 0.90, 0.8), row(1, True, 0.85, 0.6), row(2, False, 0.95, 0.1, stopped=True),
            row(3, False, 0.80, 0.2)]
    a = gate_aurocs(rows)
    assert a["gate_auroc_score"] == 0.5  # the unanswerable 0.95 outranks both answerable ones
    assert a["gate_auroc_coverage"] == 1.0
    assert a["gate_auroc_read"] == 1.0  # the reading moves the 0.95 below every score
    assert gate_aurocs(rows[:2]) == {}  # one label only
    assert gate_aurocs([*rows, AnswerRow("x", True, "", "", "", (), (), False, False, False)]) == {}
