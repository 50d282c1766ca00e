"""A repeated question does not stop a batch (issue 42): the same line again (same id, same question
and options; in a text file, the same question) is answered once and reported, with a warning, in
``QuestionSet.repeated``, ``BatchReport.repeated``, the CLI's output and its summary JSON. One id used
for two different questions is still refused: answering once would lose one of them."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rag.batch import (BatchInputError, BatchQuestion, BatchRunner, RepeatedLine, RunInfo, fold_repeats,
                       read_questions, text_id)
from rag.config import BatchConfig
from tests.fakes import FakeAnswerer

INFO = RunInfo("cfg0000000000000", "res0000000000000", {"embedding": "fake-emb", "generator": "fake-gen"}, "abc123", False)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_a_repeated_text_line_is_answered_once_and_reported(tmp_path, caplog):
    p = tmp_path / "q.txt"
    p.write_text("연차 휴가는 며칠인가요?\n병가는 며칠인가요?\n연차 휴가는 며칠인가요?\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="rag.batch.questions"):
        qs = read_questions(p)  # on_invalid="stop": a repeat is no bad line
    assert [q.question for q in qs.questions] == ["연차 휴가는 며칠인가요?", "병가는 며칠인가요?"]
    assert qs.problems == ()
    assert qs.repeated == (RepeatedLine(3, text_id("연차 휴가는 며칠인가요?"), 1),)
    assert "q.txt:3: repeats line 1" in caplog.text

    fake = FakeAnswerer()
    out = tmp_path / "out.jsonl"
    rep = BatchRunner(fake, INFO, BatchConfig(concurrency=1)).run(qs, out)
    assert fake.started == ["연차 휴가는 며칠인가요?", "병가는 며칠인가요?"]  # answered once
    assert rep.repeated == qs.repeated and rep.complete and rep.summary.questions == 2
    assert [r["question"] for r in _lines(out)] == ["연차 휴가는 며칠인가요?", "병가는 며칠인가요?"]


def test_jsonl_a_repeat_is_folded_and_an_id_for_another_question_is_still_a_bad_line(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "a", "question": "ok", "expected": 1}\n'
                 '{"id": "b", "question": "other"}\n'
                 '{"id": "a", "question": "ok", "expected": 1}\n'  # 3: the same line again
                 '{"id": "a", "question": "ok", "expected": 2}\n'  # 4: same question, other gold
                 '{"id": "b", "question": "changed"}\n', encoding="utf-8")  # 5: another question
    with pytest.raises(BatchInputError) as e:
        read_questions(p)
    assert [(pr.line, pr.kind) for pr in e.value.problems] == [(4, "duplicate_id"), (5, "duplicate_id")]
    assert "differ in other fields" in str(e.value) and "differ in question" in str(e.value)
    qs = read_questions(p, on_invalid="skip")
    assert [q.id for q in qs.questions] == ["a", "b"] and [r.line for r in qs.repeated] == [3]


def test_the_runner_folds_repeats_it_is_given_and_refuses_conflicts(tmp_path):
    a = BatchQuestion("a", "ok", 1, 0)
    b = BatchQuestion("b", "other", 2, 1)
    kept, repeats = fold_repeats([a, b, BatchQuestion("a", "ok", 3, 2)])
    assert kept == [a, b] and repeats == [RepeatedLine(3, "a", 1)]
    fake = FakeAnswerer()
    rep = BatchRunner(fake, INFO, BatchConfig(concurrency=1)).run([a, b, BatchQuestion("a", "ok", 3, 2)],
                                                                  tmp_path / "out.jsonl")
    assert sorted(fake.started) == ["ok", "other"] and rep.repeated == (RepeatedLine(3, "a", 1),) and rep.complete
    with pytest.raises(BatchInputError, match="'a' is used for two different questions"):
        BatchRunner(FakeAnswerer(), INFO).run([a, BatchQuestion("a", "not ok", 2, 1)], tmp_path / "other.jsonl")


def test_rag_batch_answers_a_repeated_question_once_and_says_so(tmp_path, capsys):
    from rag.cli.main import main
    from tests.conftest import write_config

    cfg = write_config(tmp_path)
    assert main(["index", "--config", str(cfg)]) == 0
    q = tmp_path / "q.txt"
    q.write_text("연차 휴가는 며칠인가요?\n연차 휴가는 며칠인가요?\n", encoding="utf-8")
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    capsys.readouterr()
    assert main(["batch", str(q), "-o", str(out), "--config", str(cfg), "--summary-json", str(summary)]) == 0
    captured = capsys.readouterr()
    assert "1 repeated question line(s), answered once with the line they repeat: 2 (= 1)" in captured.err
    assert "repeated lines: 1" in captured.out
    assert [r["id"] for r in _lines(out)] == [text_id("연차 휴가는 며칠인가요?")]
    got = json.loads(summary.read_text(encoding="utf-8"))
    assert got["questions"] == 1 and got["repeated"] == [
        {"line": 2, "id": text_id("연차 휴가는 며칠인가요?"), "first_line": 1}]
