"""Follow-up questions in a conversation through the Python API, the CLI and a batch: the
follow-up is resolved before retrieval (rag.conversation), the result says what it became, and a
question that stands alone is never changed."""
from __future__ import annotations

import asyncio
import json

import pytest

from rag.cli.main import main
from rag.config import load_config
from rag.errors import InputError
from rag.pipeline import Pipeline
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


# -- the earlier turn's evidence (issue 41 item 1) ------------------------------------------------
def _block(p, doc_id: str):
    return next(c for c in p.index.chunks if c.document_id == doc_id)


def _candidates(r) -> list[str]:
    return [c.evidence_id for c in r.trace.candidates]


def test_a_follow_ups_search_adds_the_blocks_the_previous_answer_cited(built, derived):
    # the previous answer cited a safety rule's article; the follow-up's own words point elsewhere
    cited = _block(built, "forklift-safety")
    history = [Turn("user", HISTORY[0]["content"]), Turn("assistant", HISTORY[1]["content"], (cited.evidence_id,))]
    small = derived(built, **{"retrieval.candidates": 2})
    r = small.answer(FOLLOW, history)
    assert not r.resolution.standalone and "earlier" in r.trace.timings_ms
    assert cited.evidence_id in _candidates(r)  # joined even past the candidate limit
    off = derived(built, **{"retrieval.candidates": 2, "conversation.earlier_evidence": False}).answer(FOLLOW, history)
    assert cited.evidence_id not in _candidates(off) and "earlier" not in off.trace.timings_ms


def test_a_question_that_stands_alone_is_not_pulled_toward_the_earlier_evidence(built):
    cited = _block(built, "forklift-safety")
    q = "How often must passwords be changed?"
    history = [Turn("user", HISTORY[0]["content"]), Turn("assistant", HISTORY[1]["content"], (cited.evidence_id,))]
    alone, with_history = built.answer(q), built.answer(q, history)
    assert "earlier" not in with_history.trace.timings_ms
    assert _candidates(with_history) == _candidates(alone) and with_history.answer == alone.answer


def test_the_articles_an_answer_names_are_read_when_it_carries_no_citations(tmp_path):
    # the demo's safety rule is stored one article a document, every one under the rule's title
    from tests.conftest import ROOT, write_config

    p = Pipeline(load_config(write_config(tmp_path, corpus={"paths": [str(ROOT / "data/demo/statutes.jsonl")]},
                                          retrieval={"candidates": 1}, gate={"fallback_threshold": -1.0})))
    p.build_index()
    history = [{"role": "user", "content": "밀폐공간에 들어가기 전에 무엇을 확인해야 하나요?"},
               {"role": "assistant", "content": "산소와 유해가스 농도를 측정해야 합니다(산업안전보건기준에 관한 규칙 제629조)."}]
    r = p.answer("그건 누가 해요?", history)
    assert not r.resolution.standalone
    assert [e for e in _candidates(r) if e.startswith("a-629:")], _candidates(r)
    alone = p.answer("그건 누가 해요?", history[:1] + [{"role": "assistant", "content": "측정해야 합니다."}])
    assert not [e for e in _candidates(alone) if e.startswith("a-629:")]


def test_as_turn_carries_the_answers_citations(built):
    first = built.answer(HISTORY[0]["content"])
    assert first.status == "answered"
    turn = first.as_turn()
    assert turn.role == "assistant" and turn.content == first.answer
    assert turn.citations == tuple(dict.fromkeys(c.evidence_id for c in first.citations))
    r = built.answer(FOLLOW, [Turn("user", HISTORY[0]["content"]), turn])
    assert set(turn.citations) <= set(_candidates(r))


def test_a_batch_lines_previous_citations_reach_the_search(built, tmp_path):
    cited = _block(built, "forklift-safety")
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps(built.config.with_overrides({"retrieval.candidates": 2}).model_dump(mode="json")),
                   encoding="utf-8")
    q = tmp_path / "questions.jsonl"
    line = {"id": "f1", "question": FOLLOW, "history": HISTORY, "previous_citations": [cited.evidence_id]}
    q.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    res = tmp_path / "results.jsonl"
    assert main(["batch", str(q), "-o", str(res), "--config", str(cfg)]) == 0
    row = json.loads(res.read_text(encoding="utf-8").splitlines()[0])
    assert "earlier" in row["timings_ms"] and "previous_citations" not in row["gold"]
    assert cited.evidence_id in [c["evidence_id"] for c in row["result"]["trace"]["candidates"]]


def test_previous_citations_without_the_previous_answer_are_a_bad_line(tmp_path):
    from rag.batch.questions import read_questions

    q = tmp_path / "questions.jsonl"
    q.write_text(json.dumps({"id": "b1", "question": FOLLOW, "previous_citations": ["x:1:0"]}) + "\n"
                 + json.dumps({"id": "ok", "question": "연차 휴가는 며칠인가요?"}, ensure_ascii=False) + "\n",
                 encoding="utf-8")
    qs = read_questions(q, on_invalid="skip")
    assert [x.id for x in qs.questions] == ["ok"]
    assert len(qs.problems) == 1 and "assistant turn" in str(qs.problems[0])


def test_a_rewriter_endpoint_of_its_own_rewrites_beside_the_extractive_answer(built, derived, fake_llm):
    from tests.fakes import Reply

    fake_llm.script(Reply(json.dumps({"question": "신입사원의 연차 휴가는 며칠인가요?"}, ensure_ascii=False),
                          prompt_tokens=90, completion_tokens=12))
    p = derived(built, **{"conversation.rewriter": {"model": "rewriter", "base_url": fake_llm.base_url},
                          "conversation.resolve": "auto"})
    r = p.answer(FOLLOW, HISTORY)
    assert r.resolution.method == "llm" and r.resolution.question == "신입사원의 연차 휴가는 며칠인가요?"
    assert (r.resolution.prompt_tokens, r.resolution.completion_tokens) == (90, 12)
    assert r.trace.attempts and r.trace.attempts[0].generator.startswith("extractive")  # the answer stays extractive
    body = fake_llm.requests[0]["body"]
    assert body["model"] == "rewriter" and "연차 휴가는 며칠인가요?" in body["messages"][1]["content"]
    again = p.answer(FOLLOW, HISTORY)  # the same turn again: from the cache, nothing sent
    assert again.resolution.cached and len(fake_llm.requests) == 1
    fake_llm.script(Reply("garbage that is not JSON"))
    fallback = p.answer("그럼 경력직은요?", HISTORY)
    assert fallback.resolution.method == "rules" and "failed" in fallback.resolution.reason


def test_earlier_evidence_a_caller_may_not_read_never_joins_its_candidates(tmp_path):
    from rag.access import Principal
    from rag.types import Document
    from tests.conftest import write_config

    p = Pipeline(load_config(write_config(tmp_path, retrieval={"candidates": 1}, gate={"fallback_threshold": -1.0})))
    p.build_index([Document("pub", "연차 휴가는 15일이다. 휴가 신청은 팀장에게 한다.", title="휴가 안내", uri="mem://pub"),
                   Document("hr-only", "급여 기준표 비밀 canaryhr 성과급은 연 2회 지급한다.", title="인사 비밀", uri="mem://hr",
                            metadata={"access": {"groups": ["hr"]}}),
                   Document("pub2", "출장비는 하루 5만원이다.", title="출장", uri="mem://pub2")])
    secret = next(c.evidence_id for c in p.index.chunks if c.document_id == "hr-only")
    history = [Turn("user", "연차 휴가는 며칠인가요?"), Turn("assistant", "15일입니다.", (secret,))]
    anonymous = p.answer("그럼 신입사원은요?", history)
    assert secret not in _candidates(anonymous) and "canaryhr" not in anonymous.dumps()
    hr = p.answer("그럼 신입사원은요?", history, principal=Principal("kim", ("hr",)))
    assert secret in _candidates(hr)  # the same request from someone who may read it
