"""The budget is airtight: the format instruction and the schema are counted from the real ones,
the retry feedback fits its reserve, and max_tokens / output_reserve / the tokenizer agree."""
from __future__ import annotations

import json

import pytest

from rag.answer.contract import FORMAT_INSTRUCTION, Violation, answer_json_schema
from rag.answer.loop import build_request, feedback_message, format_overhead
from rag.config import ConfigError, ContextConfig, GenerationConfig, RagConfig, load_config
from rag.context import Evidence, PromptBuilder
from rag.text.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
TEXT = ("제8조의2 ② 국내 여행자 및 국외 여행자는 여행을 마친 날의 다음 날부터 기산하여 2주일 이내에 운임과 숙박비의 "
        "정산을 신청하여야 한다. ") * 12


def evidence(n: int) -> list[Evidence]:
    return [Evidence(f"d{i}:1:0", f"d{i}", "1", TEXT, 0, len(TEXT), 1.0 - i / 100) for i in range(n)]


def test_format_overhead_counts_the_instruction_and_the_schema():
    got = format_overhead(COUNTER, 8, 4)
    schema = json.dumps(answer_json_schema([f"S{i}" for i in range(1, 9)]), ensure_ascii=False, separators=(",", ":"))
    assert got == COUNTER.count(FORMAT_INSTRUCTION) + COUNTER.count(schema) + 8
    assert got > 150  # the old constant undercounted it
    assert format_overhead(COUNTER, 16, 4) > got  # a longer source-id enum costs more


def test_feedback_is_cut_to_fit_its_reserve():
    vs = [Violation("quote_not_found", f"the quote of citation {i} ('{'가' * 60}') does not occur in S{i}")
          for i in range(1, 13)]
    full = feedback_message(vs, ["S1", "S2"])
    cut = feedback_message(vs, ["S1", "S2"], counter=COUNTER, max_tokens=200)
    assert COUNTER.count(full.content) > 200 >= COUNTER.count(cut.content)
    assert "… and" in cut.content and "[quote_not_found]" in cut.content


@pytest.mark.parametrize("limit", [1200, 2000, 4000])
def test_every_retry_request_fits_the_window(limit):
    """prompt + format instruction + schema + feedback + output reserve <= context_limit."""
    cfg = ContextConfig(context_limit=limit, output_reserve=300, feedback_reserve=120, max_blocks=6,
                        min_block_tokens=8, safety_margin=0)
    ov = format_overhead(COUNTER, cfg.max_blocks, cfg.message_overhead)
    prompt = PromptBuilder(COUNTER, cfg, schema_overhead=ov).build("정산은 언제까지 신청하나요?", evidence(6))
    many = [Violation("unsupported_sentence", f"sentence {i} ('{'정산' * 30}') is not supported") for i in range(30)]
    for violations in ((), many):
        req = build_request(prompt, 2, violations, "정산은 언제까지 신청하나요?")
        sent = sum(COUNTER.count(m.content) + cfg.message_overhead for m in req.messages)
        sent += COUNTER.count(json.dumps(req.json_schema, ensure_ascii=False, separators=(",", ":")))
        assert sent + cfg.output_reserve <= limit, (sent, limit)


def test_max_tokens_must_equal_output_reserve():
    with pytest.raises(ConfigError, match="generation.max_tokens .* must equal context.output_reserve"):
        RagConfig(**{"generation": {"max_tokens": 500}})
    ok = RagConfig(**{"generation": {"max_tokens": 500}, "context": {"output_reserve": 500}})
    assert ok.generation.max_tokens == ok.context.output_reserve == 500


def test_max_tokens_mismatch_in_yaml_names_both_keys(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("generation:\n  max_tokens: 256\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="output_reserve"):
        load_config(f)


def test_tokenizer_follows_generation_model_unless_set():
    c = RagConfig(**{"generation": {"model": "gpt-4o"}})
    assert c.context.model is None and c.tokenizer_model == "gpt-4o"
    c2 = RagConfig(**{"generation": {"model": "gpt-4o"}, "context": {"model": "gpt-4"}})
    assert c2.tokenizer_model == "gpt-4"


def test_abstention_messages_need_a_default_and_follow_the_language():
    g = GenerationConfig()
    assert g.abstention_message("ko") != g.abstention_message("en")
    assert g.abstention_message("fr") == g.abstention_messages["default"]
    with pytest.raises(ConfigError, match="default"):
        GenerationConfig(abstention_messages={"ko": "없음"})
