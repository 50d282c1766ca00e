"""``rag eval-answers`` (extra question files, per-style tables, --out) and ``rag eval-addressing``
(rag.cli.evaluate), run in-process."""
from __future__ import annotations

import json
import re

import pytest

from rag.cli.evaluate import metrics_table
from rag.cli.main import main
from tests.conftest import write_config
from tests.unit.evaluation.addressing_data import write_dataset

CORPUS = [{"id": "leave", "version": "2", "title": "Leave", "uri": "u:2",
           "text": "Annual leave. Employees get sixteen days of annual leave in the first year."},
          {"id": "forklift", "version": "1", "title": "Forklifts", "uri": "u:f",
           "text": "Forklift speed. Forklift speed inside the plant is limited to ten kilometres per hour."}]
QUESTIONS = [{"id": "q1", "question": "How many days of annual leave do employees get in the first year?",
              "answerable": True, "gold": {"doc_id": "leave", "answer_facts": ["sixteen days"],
                                           "quote": "Employees get sixteen days of annual leave in the first year."},
              "style": "numeric"},
             {"id": "u1", "question": "What is the cafeteria lunch menu on Fridays?", "answerable": False,
              "gold": {"reason": "not in the corpus"}, "style": "other-law"}]
EXTRA = [{"id": "n1", "question": "How fast may forklifts drive inside the plant?", "answerable": True,
          "gold": {"doc_id": "forklift", "answer_facts": ["ten kilometres per hour"]}, "style": "numeric"},
         {"id": "n2", "question": "What colour are the forklifts painted?", "answerable": False,
          "gold": {"reason": "not in the corpus"}, "style": "near-miss"}]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in rows), encoding="utf-8")
    return path


@pytest.fixture
def answers(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    _jsonl(root / "corpus.jsonl", CORPUS)
    _jsonl(root / "questions.jsonl", QUESTIONS)
    cfg = write_config(tmp_path / "c", gate={"fallback_signal": "bm25", "fallback_threshold": 1.0})
    return root, cfg


def test_metrics_table_is_aligned_text():
    lines = metrics_table("all questions", {"n": 3, "accuracy_answerable": 0.5, "answer_precision": None})
    assert lines == ["all questions", f"  {'n':30}{'3':>10}", f"  {'accuracy_answerable':30}{'0.5000':>10}",
                     f"  {'answer_precision':30}{'-':>10}"]


def test_eval_answers_extra_questions_style_tables_and_out(answers, tmp_path, capsys):
    root, cfg = answers
    extra = _jsonl(tmp_path / "nearmiss.jsonl", EXTRA)
    out = tmp_path / "res" / "answers.json"
    assert main(["eval-answers", "--dataset", str(root), "--config", str(cfg), "--questions", str(extra),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "4 questions (2 answerable, 2 unanswerable)" in printed and f"questions from {root}" in printed
    blocks = printed.split("\n\n")
    titles = [b.strip().splitlines()[0].strip() for b in blocks[1:]]
    assert [t.split(" (")[0] for t in titles] == ["style near-miss", "style numeric", "style other-law"]
    for block in blocks[1:]:  # every style table carries the answer metrics, not only accuracy
        assert re.search(r"answer_precision\s", block) and "precision_of_answered" in block
    assert "answer_chars_mean" in blocks[0] and "answer_sentences_mean" in blocks[0]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [r["id"] for r in data["rows"]] == ["q1", "u1", "n1", "n2"]
    assert data["question_files"] == [str(root / "questions.jsonl"), str(extra)]
    assert data["by_style"]["numeric"]["n"] == 2 and "answer_precision" in data["by_style"]["numeric"]
    q1 = data["rows"][0]
    assert {"answer_precision", "sentences"} <= set(q1)
    assert (q1["sentences"] > 0) == (q1["status"] == "answered")


def test_eval_answers_duplicate_id_in_an_extra_file_exits_2(answers, tmp_path, capsys):
    root, cfg = answers
    extra = _jsonl(tmp_path / "nearmiss.jsonl", [EXTRA[0], {**EXTRA[1], "id": "q1"}])
    assert main(["eval-answers", "--dataset", str(root), "--config", str(cfg), "--questions", str(extra)]) == 2
    assert re.search(r"nearmiss.jsonl:2: question id 'q1' already used on .*questions.jsonl:1",
                     capsys.readouterr().err)


def test_eval_addressing_table_failures_and_out(tmp_path, capsys):
    root = write_dataset(tmp_path / "ds")
    cfg = write_config(tmp_path / "c")
    out = tmp_path / "addr.json"
    assert main(["eval-addressing", "--dataset", str(root), "--config", str(cfg), "--show", "2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "7 questions with a gold quote (7 paragraph blocks, 0 quote blocks), 2 paraphrase claims, " \
           "2 nested pairs left out" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["cases"]) == 48
    for name, m in data["metrics"].items():  # the printed k/n are the written ones
        assert re.search(rf"{name}\s+{m['k']}/{m['n']}\s", printed)
    fails = [c for c in data["cases"] if not c["ok"]]
    assert data["n_failures"] == len(fails) and f"failures: {len(fails)}" in printed
    shown = printed.count("      question: ")
    assert shown == min(2, len(fails))
    for kind, codes in data["codes"].items():
        assert re.search(rf"{kind}\s+" + (re.escape(", ".join(f"{c} {n}" for c, n in codes.items())) or "none"),
                         printed)


def test_eval_addressing_bad_dataset_exits_2(tmp_path, capsys):
    cfg = write_config(tmp_path / "c")
    assert main(["eval-addressing", "--dataset", str(tmp_path / "nope"), "--config", str(cfg)]) == 2
    assert "dataset folder not found" in capsys.readouterr().err
    root = write_dataset(tmp_path / "ds")
    assert main(["eval-addressing", "--dataset", str(root), "--config", str(cfg), "--claims",
                 str(tmp_path / "none.jsonl")]) == 2
    assert "claims file not found" in capsys.readouterr().err
