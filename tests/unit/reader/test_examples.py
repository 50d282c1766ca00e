"""Reader examples: rows round-trip, sentence labels follow the passage label and the answer spans."""
from __future__ import annotations

import pytest

from rag.reader.errors import ReaderDataError
from rag.reader.examples import ReaderExample, sentences_holding

PASSAGE = "서울은 대한민국의 수도이다. 서울의 인구는 약 940만 명이다. 한강이 흐른다."
SENTS = ((0, 15), (16, 35), (36, 43))


def example(**kw) -> ReaderExample:
    base = dict(example_id="korquad1:ko-ko:k2:서울#0", source="korquad1", source_split="dev", split="train",
                split_key="서울#0", question_id="k2", question_lang="ko", passage_lang="ko",
                question="서울의 인구는?", answers=("940만 명",), answerable=True, passage_id="서울#0",
                passage_title="서울", passage=PASSAGE, origin="gold", passage_label="answers", sentences=SENTS,
                answer_sentences=(1,))
    base.update(kw)
    return ReaderExample(**base)


def test_sentences_holding_a_span():
    start = PASSAGE.index("940만 명")
    assert sentences_holding(SENTS, ((start, start + 6),)) == (1,)
    assert sentences_holding(SENTS, ((10, 20),)) == (0, 1)  # a span across a boundary marks both
    assert sentences_holding(SENTS, ()) == ()


def test_round_trip_and_sentence_labels():
    ex = example()
    assert ReaderExample.from_row(ex.to_row()) == ex
    rows = ex.sentence_examples()
    assert [r.label for r in rows] == ["passage_answers", "holds_answer", "passage_answers"]
    assert rows[1].sentence == "서울의 인구는 약 940만 명이다." and "940만 명" in rows[1].sentence


@pytest.mark.parametrize("label, held, want", [("no_answer", None, "no_answer"), ("unknown", None, "unknown"),
                                               ("answers", None, "unknown")])
def test_sentence_label_without_spans(label, held, want):
    ex = example(passage_label=label, answer_sentences=held, origin="bm25" if label == "no_answer" else "gold")
    assert {r.label for r in ex.sentence_examples()} == {want}


@pytest.mark.parametrize("bad", [dict(passage_label="maybe"), dict(origin="web"), dict(sentences=((0, 999),)),
                                 dict(passage_label="no_answer"), dict(answer_sentences=(7,))])
def test_inconsistent_rows_are_refused(bad):
    with pytest.raises(ReaderDataError):
        ReaderExample.from_row(example(**bad).to_row())


def test_a_row_missing_a_field_is_a_typed_error():
    row = example().to_row()
    del row["sentences"]
    with pytest.raises(ReaderDataError, match="not a reader example row"):
        ReaderExample.from_row(row)
