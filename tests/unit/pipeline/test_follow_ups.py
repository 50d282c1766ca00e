"""Follow-up questions in a conversation through the Python API, the CLI and a batch: the
follow-up is resolved before retrieval (rag.conversation), the result says what it became, and a
question that stands alone is never changed."""
from __future__ import annotations

import asyncio
import json

import pytest

from rag.cli.main import main
from rag.errors import InputError
from rag.types import Turn

HISTORY = [{"role": "user", "content": "연차 휴가는 며칠인가요?"},
           {"role": "assistant", "content": "입사 첫해 직원에게는 연차 휴가 16일이 부여됩니다."}]
FOLLOW = "그럼 신입사원은요?"
RESOLVED = "신입사원은 연차 휴가는 며칠인가요?"


def _check(r) -> None:
    assert r.status == "answered", (r.reason, r.answer)
    assert "16일" in r.answer
    assert r.question == FOLLOW
    assert r.resolution is not None and r.resolution.question.startswith(RESOLVED)
    assert r.resolution.method == "rules" and not r.resolution.standalone
    j = r.to_json()
    assert j["question"] == FOLLOW and j["resolution"]["question"] == r.resolution.question
    assert j["trace"]["resolution"] == j["resolution"]


@pytest.mark.parametrize("kind", ["dicts", "turns"])
def test_the_python_api_resolves_a_follow_up_with_turns_or_openai_style_dicts(built, kind):
    history = HISTORY if kind == "dicts" else [Turn(t["role"], t["content"]) for t in HISTORY]
    _check(built.answer(FOLLOW, history))


def test_the_async_api_resolves_it_too(built):
    _check(asyncio.run(built.aanswer(FOLLOW, HISTORY)))


def test_a_question_that_stands_alone_is_answered_as_without_history(built):
    q = "How often must passwords be changed?"
    alone, with_history = built.answer(q), built.answer(q, HISTORY)
    assert with_history.resolution.standalone and with_history.resolution.question == q
    assert (with_history.status, with_history.answer) == (alone.status, alone.answer)


def test_resolution_off_leaves_the_history_to_the_prompt(built, derived):
    r = derived(built, **{"conversation.resolve": "off"}).answer(FOLLOW, HISTORY)
    assert r.resolution is None and r.question == FOLLOW


def test_a_bad_history_is_a_typed_error(built):
    with pytest.raises(InputError, match="role"):
        built.answer(FOLLOW, [{"role": "robot", "content": "x"}])
    with pytest.raises(InputError, match="history"):
        built.answer(FOLLOW, "연차 휴가는 며칠인가요?")


def test_rag_ask_with_history_and_a_batch_line_with_history(built, tmp_path, capsys):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps(built.config.model_dump(mode="json")), encoding="utf-8")
    hist = tmp_path / "hist.json"
    hist.write_text(json.dumps(HISTORY, ensure_ascii=False), encoding="utf-8")
    assert main(["ask", FOLLOW, "--history", str(hist), "--config", str(cfg), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "answered" and "16일" in out["answer"]
    assert out["resolution"]["question"].startswith(RESOLVED)

    q = tmp_path / "questions.jsonl"
    q.write_text(json.dumps({"id": "f1", "question": FOLLOW, "history": HISTORY}, ensure_ascii=False) + "\n",
                 encoding="utf-8")
    res = tmp_path / "results.jsonl"
    assert main(["batch", str(q), "-o", str(res), "--config", str(cfg)]) == 0
    line = json.loads(res.read_text(encoding="utf-8").splitlines()[0])["result"]
    assert line["status"] == "answered" and "16일" in line["answer"]
    assert line["resolution"]["question"].startswith(RESOLVED)


def test_an_answer_quoting_only_the_other_language_says_so_in_the_question_language():
    from rag.pipeline.trace import source_language_note

    ko = "입사 첫해 직원에게는 연차 휴가 16일이 부여된다."
    en = "Passwords must be changed every 90 days."
    assert source_language_note("How many days of annual leave do new employees get?", [ko]) == (
        "(The quoted sources are in Korean.)")
    assert source_language_note("비밀번호는 얼마나 자주 바꿔야 하나요?", [en]) == "(인용한 자료는 영어로 되어 있습니다.)"
    assert source_language_note("연차 휴가는 며칠인가요?", [ko]) == ""
    assert source_language_note("How many days?", [ko, en]) == ""  # sources in both languages


def test_build_prompt_resolves_the_follow_up_too(built):
    searched, prompt = built.build_prompt(FOLLOW, HISTORY)
    assert searched.query.startswith(RESOLVED)
    assert any("16일" in b.text for b in prompt.bundle.blocks)


def test_the_gate_reads_the_follow_up_as_asked_and_stops_on_it_only_when_configured(built, derived):
    """``gate.require_followup_terms``: the corpus says 입사 첫해 직원, never 신입사원, so the strict
    gate stops what the default answers; the trace names the silent word either way."""
    default = built.answer(FOLLOW, HISTORY)
    assert default.status == "answered"
    assert default.to_json()["trace"]["gate"]["fit"]["followup_missing"] == ["신입사원"]
    strict = derived(built, **{"gate.require_followup_terms": True}).answer(FOLLOW, HISTORY)
    assert (strict.status, strict.reason) == ("insufficient_evidence", "topic_missing")
    alone = derived(built, **{"gate.require_followup_terms": True}).answer(RESOLVED)
    assert alone.status == "answered"  # a question asked in full is not a follow-up
