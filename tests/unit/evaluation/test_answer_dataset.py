"""Loading an answer dataset with extra question files (rag.evaluation.answer_dataset)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.errors import DatasetError
from rag.evaluation.answer_dataset import current_documents, load_answer_dataset
from tests.unit.evaluation.addressing_data import CORPUS, QUESTIONS, TRAVEL, write_dataset

EXTRA = [
    {"id": "n1", "question": "출장 숙박비 영수증은 언제 내나요?", "answerable": False, "gold": {"reason": "없음"},
     "style": "near-miss"},
    {"id": "n2", "question": "광역시 숙박비는?", "answerable": True,
     "gold": {"doc_id": "travel", "answer_facts": ["8만원"]}, "style": "numeric"},
]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in rows), encoding="utf-8")
    return path


def test_extra_questions_come_after_the_datasets_own(tmp_path):
    root = write_dataset(tmp_path / "ds")
    extra = _jsonl(tmp_path / "nearmiss.jsonl", EXTRA)
    more = _jsonl(tmp_path / "more.jsonl", [{**EXTRA[0], "id": "n3"}])
    data = load_answer_dataset(root, [extra, more])
    assert [q.id for q in data.questions] == [q["id"] for q in QUESTIONS] + ["n1", "n2", "n3"]
    assert data.question_files == (root / "questions.jsonl", extra, more)
    assert data.questions[-2].gold.doc_id == "travel" and data.questions[-1].answerable is False
    assert load_answer_dataset(root).question_files == (root / "questions.jsonl",)


@pytest.mark.parametrize("rows, message", [
    ([EXTRA[0], {**EXTRA[1], "id": "t1"}], r"nearmiss.jsonl:2: question id 't1' already used on .*questions.jsonl:1;"),
    ([EXTRA[0], EXTRA[0]], r"nearmiss.jsonl:2: question id 'n1' already used on line 1;"),
    ([{**EXTRA[1], "gold": {"doc_id": "other", "answer_facts": ["x"]}}],
     r"nearmiss.jsonl:1: gold.doc_id 'other' is not an id in corpus.jsonl"),
    ([{"id": "n9", "answerable": False}], r"nearmiss.jsonl:1: missing 'question'"),
    ([], r"nearmiss.jsonl: no questions"),
])
def test_extra_question_errors_name_the_file_and_line(tmp_path, rows, message):
    root = write_dataset(tmp_path / "ds")
    with pytest.raises(DatasetError, match=message):
        load_answer_dataset(root, [_jsonl(tmp_path / "nearmiss.jsonl", rows)])


def test_missing_extra_file(tmp_path):
    with pytest.raises(DatasetError, match=r"questions file not found: .*nope.jsonl"):
        load_answer_dataset(write_dataset(tmp_path / "ds"), [tmp_path / "nope.jsonl"])


def test_current_documents_are_the_greatest_versions(tmp_path):
    docs = current_documents(load_answer_dataset(write_dataset(tmp_path / "ds")))
    assert list(docs) == ["rent", "travel"]
    assert docs["travel"].version == "2" and docs["travel"].text == TRAVEL and docs["travel"].uri == "u:travel-2"
    assert len(CORPUS) == 3  # two versions of travel in the corpus


def test_a_question_may_carry_the_conversation_before_it(tmp_path):
    root = write_dataset(tmp_path / "ds")
    follow = {**EXTRA[1], "id": "d1", "question": "광역시는요?",
              "history": [{"role": "user", "content": "출장 숙박비 상한은 얼마예요?"},
                          {"role": "assistant", "content": "서울은 10만원입니다."}]}
    data = load_answer_dataset(root, [_jsonl(tmp_path / "dialogues.jsonl", [follow, EXTRA[0]])], own_questions=False)
    assert [q.id for q in data.questions] == ["d1", "n1"]
    assert [(t.role, t.content) for t in data.questions[0].history] == [
        ("user", "출장 숙박비 상한은 얼마예요?"), ("assistant", "서울은 10만원입니다.")]
    assert data.questions[1].history == () and data.question_files == (tmp_path / "dialogues.jsonl",)


@pytest.mark.parametrize("history, message", [
    ({"role": "user"}, r"dialogues.jsonl:1: 'history' must be a list"),
    ([{"role": "system", "content": "x"}], r"dialogues.jsonl:1: .*role"),
])
def test_a_bad_history_names_the_file_and_line(tmp_path, history, message):
    root = write_dataset(tmp_path / "ds")
    with pytest.raises(DatasetError, match=message):
        load_answer_dataset(root, [_jsonl(tmp_path / "dialogues.jsonl", [{**EXTRA[0], "history": history}])])


def test_only_questions_needs_a_questions_file(tmp_path):
    with pytest.raises(DatasetError, match="--only-questions"):
        load_answer_dataset(write_dataset(tmp_path / "ds"), own_questions=False)
