"""Answer-level evaluation (rag.evaluation.faithfulness) and version ordering (rag.index.version_order)."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from rag.config import load_config
from rag.errors import DatasetError
from rag.evaluation import answer_scoring as scoring
from rag.evaluation.faithfulness import (
    AnswerQuestion,
    AnswerRow,
    Gold,
    answer_metrics,
    eval_answers,
    fact_found,
    load_answer_dataset,
    normalize_fact_text,
    score_answer,
    style_metrics,
)
from rag.index.version_order import latest_versions, version_key
from tests.conftest import write_config

CORPUS = [
    {"id": "leave", "version": "2024-01-01", "title": "Leave policy", "uri": "u:leave",
     "text": "Annual leave. Employees get fifteen days of annual leave in the first year of service."},
    {"id": "rent", "version": "2023-01-01", "title": "임대차 시행령", "uri": "u:rent-2023",
     "text": "소액임차인의 보증금 기준. 서울특별시의 소액임차인은 보증금이 1억5천만원 이하인 임차인으로 한다."},
    {"id": "rent", "version": "2026-01-02", "title": "임대차 시행령", "uri": "u:rent-2026",
     "text": "소액임차인의 보증금 기준. 서울특별시의 소액임차인은 보증금이 1억6천500만원 이하인 임차인으로 한다."},
    {"id": "travel", "version": "10", "title": "여비 규정", "uri": "u:travel",
     "text": "여비 정산. 출장자는 여행을 마친 날부터 2주일 이내에 운임과 숙박비의 정산을 신청하여야 한다."},
    {"id": "forklift", "version": "1", "title": "Forklifts", "uri": "u:forklift",
     "text": "Forklift speed. Forklift speed inside the plant is limited to ten kilometres per hour."},
]
QUESTIONS = [
    {"id": "q1", "question": "How many days of annual leave do employees get in the first year?", "answerable": True,
     "gold": {"doc_id": "leave", "article": "1", "answer_facts": ["fifteen days"], "quote": "fifteen days"},
     "style": "numeric"},
    {"id": "q2", "question": "서울 소액임차인 보증금 기준은 얼마 이하인가요?", "answerable": True,
     "gold": {"doc_id": "rent", "article": "1", "answer_facts": ["1억6천500만원"], "quote": "1억6천500만원",
              "superseded_facts": ["1억5천만원"]}, "style": "version"},
    {"id": "q3", "question": "출장 후 운임과 숙박비 정산은 며칠 이내에 신청해야 하나요?", "answerable": True,
     "gold": {"doc_id": "travel", "article": "1", "answer_facts": ["2주일"], "quote": "2주일"}, "style": "numeric"},
    {"id": "u1", "question": "What is the cafeteria lunch menu on Fridays?", "answerable": False,
     "gold": {"reason": "not in the corpus"}, "style": "other-law"},
]


def make_dataset(root: Path, corpus=CORPUS, questions=QUESTIONS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in corpus),
                                       encoding="utf-8")
    (root / "questions.jsonl").write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in questions),
                                          encoding="utf-8")
    return root


def fast_config(tmp_path: Path) -> Path:
    """Hashing embedder, no reranker; the gate falls back to BM25 with a low threshold."""
    return write_config(tmp_path / "cfg", gate={"fallback_signal": "bm25", "fallback_threshold": 1.0})


# -- versions ------------------------------------------------------------------------
def test_version_key_is_natural():
    assert version_key("2026-01-02") > version_key("2023-01-01")
    assert version_key("2025.1") > version_key("2024.1")
    assert version_key("10") > version_key("9")
    assert version_key("v1.10") > version_key("v1.9")
    assert sorted(["v10", "v9", "1", "01"], key=version_key) == ["01", "1", "v9", "v10"]


def test_latest_versions_per_document_sorted():
    got = latest_versions([("b", "9"), ("a", "2023-01-01"), ("b", "10"), ("a", "2026-01-02"), ("b", "2")])
    assert got == {"a": "2026-01-02", "b": "10"}
    assert list(got) == ["a", "b"]


# -- facts ---------------------------------------------------------------------------
def test_fact_normalisation():
    assert normalize_fact_text("**1억 6천500만원**") == "1억6천500만원"
    assert normalize_fact_text("1\\. 서울특별시:\n 10분의 3") == "1.서울특별시:10분의3"
    assert normalize_fact_text("ＡＢＣ\u200b 1") == "ABC1"  # NFKC, zero-width dropped
    assert fact_found("10분의 3", "추가로 **10분의3**을 지급한다")
    assert fact_found("1억6천500만원", "보증금이 1억 6천500만원 이하")
    assert not fact_found("2분의 1", "10분의 3")


def test_fact_found_falls_back_when_rag_text_facts_is_missing(monkeypatch):
    monkeypatch.setattr(scoring, "_same_quantities", lambda fact, answer: False)
    assert not fact_found("165,000,000원", "1억6천500만원")
    monkeypatch.setattr(scoring, "_same_quantities", lambda fact, answer: True)
    assert fact_found("165,000,000원", "1억6천500만원")


def test_fact_found_compares_quantities_when_rag_text_facts_is_there():
    pytest.importorskip("rag.text.facts")
    assert fact_found("1억6천500만원", "보증금이 165,000,000원 이하")
    assert fact_found("10분의 3", "상한액의 30%까지")
    assert not fact_found("1억6천500만원", "보증금이 1억5천만원 이하")
    assert not fact_found("진단서", "아무 숫자 없음")  # a fact without a quantity is never matched vacuously


# -- scoring -------------------------------------------------------------------------
LATEST = {"rent": "2026-01-02", "leave": "1"}
Q_RENT = AnswerQuestion("q", "?", True, Gold("rent", ("1억6천500만원", "서울"), superseded_facts=("1억5천만원",)),
                        "version")
Q_NONE = AnswerQuestion("u", "?", False, None, "near-miss")


def test_score_answer_correct_needs_every_fact_and_the_current_version():
    ok = score_answer(Q_RENT, "answered", "서울: 1억6천500만원 [S1]", [("rent", "2026-01-02")], LATEST, "validated")
    assert (ok.facts_found, ok.correct, ok.cited_gold_current, ok.superseded_cited) == ((True, True), True, True, False)
    assert ok.style == "version" and ok.reason == "validated"
    one_fact = score_answer(Q_RENT, "answered", "1억6천500만원", [("rent", "2026-01-02")], LATEST)
    assert one_fact.facts_found == (True, False) and not one_fact.correct
    other_doc = score_answer(Q_RENT, "answered", "서울 1억6천500만원", [("leave", "1")], LATEST)
    assert not other_doc.correct and not other_doc.cited_gold_current
    old = score_answer(Q_RENT, "answered", "서울 1억6천500만원", [("rent", "2023-01-01"), ("rent", "2023-01-01")],
                       LATEST)
    assert old.cited == (("rent", "2023-01-01"),)  # unique
    assert not old.correct and old.superseded_cited
    both = score_answer(Q_RENT, "answered", "서울 1억6천500만원",
                        [("rent", "2026-01-02"), ("rent", "2023-01-01")], LATEST)
    assert both.correct and both.superseded_cited and both.cited == (("rent", "2023-01-01"), ("rent", "2026-01-02"))


def test_score_answer_superseded_fact_and_abstention():
    stale = score_answer(Q_RENT, "answered", "서울 1억5천만원", [("rent", "2026-01-02")], LATEST)
    assert stale.superseded_cited and not stale.correct and stale.cited_gold_current
    abst = score_answer(Q_RENT, "insufficient_evidence", "서울 1억6천500만원", [], LATEST, "below_threshold")
    assert abst.facts_found == (False, False) and not abst.correct and not abst.superseded_cited
    assert score_answer(Q_NONE, "insufficient_evidence", "", [], LATEST).correct
    wrong = score_answer(Q_NONE, "answered", "x", [("rent", "2023-01-01")], LATEST)
    assert not wrong.correct and wrong.superseded_cited and wrong.facts_found == ()


def row(i: int, answerable: bool, status: str, correct: bool, *, style: str | None = None, reason: str = "",
        stale: bool = False) -> AnswerRow:
    return AnswerRow(f"r{i}", answerable, status, reason, "", (), (), correct, stale, correct and answerable, style)


def test_answer_metrics_by_hand():
    rows = [
        row(1, True, "answered", True, style="numeric"),
        row(2, True, "answered", False, style="numeric", stale=True),
        row(3, True, "insufficient_evidence", False, style="multi", reason="validation_failed"),
        row(4, True, "answered", True, style="multi"),
        row(5, True, "insufficient_evidence", False, reason="below_threshold"),
        row(6, False, "insufficient_evidence", True, style="near-miss"),
        row(7, False, "answered", False, style="near-miss", reason="validated"),
        row(8, False, "insufficient_evidence", True, reason="validation_failed"),
        row(9, True, "insufficient_evidence", False, stale=True),  # not answered: not counted as superseded
    ]
    m = answer_metrics(rows)
    assert m == {
        "n": 9, "n_answerable": 6, "n_unanswerable": 3,
        "accuracy_answerable": round(2 / 6, 6),
        "answered_when_answerable": 0.5,
        "abstained_when_unanswerable": round(2 / 3, 6),
        "answered_when_unanswerable": round(1 / 3, 6),
        "precision_of_answered": 0.5,  # 2 correct of 4 answered (r7 answered unanswerable: wrong)
        "answer_precision": None, "answer_precision_correct": None,  # the rows carry none
        "answer_chars_mean": 0.0, "answer_chars_p50": 0.0, "answer_sentences_mean": 0.0,  # empty answers
        "superseded_cited": 1,
        "validation_failed": 2,
    }
    by_style = style_metrics(rows)
    assert list(by_style) == ["multi", "near-miss", "numeric"]
    assert {k: (v["n"], v["accuracy"]) for k, v in by_style.items()} == {
        "multi": (2, 0.5), "near-miss": (2, 0.5), "numeric": (2, 0.5)}


def test_answer_metrics_nothing_answered_or_empty_groups():
    m = answer_metrics([row(1, False, "insufficient_evidence", True)])
    assert m["precision_of_answered"] is None  # nothing answered: undefined, not 1.0
    assert m["accuracy_answerable"] is None and m["answered_when_answerable"] is None
    assert m["abstained_when_unanswerable"] == 1.0 and m["answered_when_unanswerable"] == 0.0


# -- the dataset ---------------------------------------------------------------------
def test_load_dataset_reads_latest_versions_and_questions(tmp_path):
    ds = load_answer_dataset(make_dataset(tmp_path / "ds"))
    assert dict(ds.latest) == {"forklift": "1", "leave": "2024-01-01", "rent": "2026-01-02", "travel": "10"}
    assert [q.id for q in ds.questions] == ["q1", "q2", "q3", "u1"]
    assert ds.questions[1].gold == Gold("rent", ("1억6천500만원",), "1", "1억6천500만원", ("1억5천만원",))
    assert ds.questions[3].gold is None and ds.questions[3].style == "other-law"


@pytest.mark.parametrize("corpus, questions, message", [
    (CORPUS, QUESTIONS[:1] + [{"id": "x", "question": "?", "answerable": True}], "questions.jsonl:2: missing 'gold'"),
    (CORPUS, [{"id": "x", "answerable": False}], "questions.jsonl:1: missing 'question'"),
    (CORPUS, [{"id": "x", "question": "?", "answerable": True, "gold": {"doc_id": "leave"}}],
     "questions.jsonl:1: missing 'gold.answer_facts'"),
    (CORPUS, [{"id": "x", "question": "?", "answerable": True, "gold": {"doc_id": "nope", "answer_facts": ["a"]}}],
     "gold.doc_id 'nope' is not an id in corpus.jsonl"),
    (CORPUS, [{"id": "x", "question": "?", "answerable": True, "gold": {"doc_id": "leave", "answer_facts": []}}],
     "'gold.answer_facts' must be a non-empty list"),
    (CORPUS, [{"id": "x", "question": "?", "answerable": "yes"}], "'answerable' must be true or false"),
    (CORPUS, QUESTIONS[3:] * 2, "questions.jsonl:2: question id 'u1' already used on line 1"),
    ([{"id": "a", "text": "t"}], QUESTIONS[3:], "corpus.jsonl:1: missing 'version'"),
])
def test_load_dataset_errors_name_file_and_line(tmp_path, corpus, questions, message):
    with pytest.raises(DatasetError, match=message.replace("(", r"\(")):
        load_answer_dataset(make_dataset(tmp_path / "ds", corpus, questions))


def test_load_dataset_missing_folder_file_and_bad_json(tmp_path):
    with pytest.raises(DatasetError, match="dataset folder not found"):
        load_answer_dataset(tmp_path / "nope")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "corpus.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DatasetError, match="no questions.jsonl"):
        load_answer_dataset(tmp_path / "half")
    root = make_dataset(tmp_path / "ds")
    with open(root / "questions.jsonl", "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(DatasetError, match=r"questions.jsonl:5: not valid JSON.*one JSON object"):
        load_answer_dataset(root)


# -- end to end ----------------------------------------------------------------------
def test_eval_answers_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    root = make_dataset(tmp_path / "ds")
    cfg = load_config(fast_config(tmp_path))
    seen: list[tuple[str, int, int]] = []
    rep = eval_answers(root, cfg, progress=lambda s, d, t: seen.append((s, d, t)))
    assert list(tmp_path.joinpath("tmp").iterdir()) == []  # the temporary index is removed
    assert [r.id for r in rep.rows] == ["q1", "q2", "q3", "u1"]
    assert dict(rep.metrics) == answer_metrics(rep.rows)
    assert rep.metrics["n"] == 4 and rep.config_hash == cfg.hash and rep.dataset == str(root)
    assert [x for x in seen if x[0] == "answer"] == [("answer", i, 4) for i in range(1, 5)]
    assert any(s == "embed" for s, _, _ in seen)
    by_id = {r.id: r for r in rep.rows}
    assert by_id["q1"].correct and by_id["q1"].cited == (("leave", "2024-01-01"),)
    assert by_id["u1"].status == "insufficient_evidence" and by_id["u1"].correct
    q2 = by_id["q2"]  # two versions in the corpus: only the newer one is the current one
    assert q2.cited_gold_current == (q2.answered and ("rent", "2026-01-02") in q2.cited)
    out = rep.to_json()
    assert set(out) == {"dataset", "question_files", "config_hash", "date", "seconds", "metrics", "by_style", "rows"}
    assert out["question_files"] == [str(root / "questions.jsonl")]
    assert set(out["by_style"]) == {"numeric", "version", "other-law"}
    assert out["rows"][0]["cited"] == [["leave", "2024-01-01"]] and out["rows"][0]["style"] == "numeric"
    json.dumps(out)  # plain JSON
