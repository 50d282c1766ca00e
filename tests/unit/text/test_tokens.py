import pytest

from rag.errors import ConfigError
from rag.text import TiktokenCounter, WhitespaceCounter, encoding_for_model, make_counter


def test_encoding_is_chosen_by_model_name():
    assert encoding_for_model("gpt-4o-mini") == "o200k_base"
    assert encoding_for_model("openai/gpt-4.1") == "o200k_base"
    assert encoding_for_model("o3-mini") == "o200k_base"
    assert encoding_for_model("gpt-4") == "cl100k_base"
    assert encoding_for_model("gpt-3.5-turbo") == "cl100k_base"
    assert make_counter("auto", "gpt-4o").name == "tiktoken:o200k_base"
    assert make_counter("cl100k_base").name == "tiktoken:cl100k_base"
    assert isinstance(make_counter("whitespace"), WhitespaceCounter)


def test_tiktoken_works_offline_and_counts_known_values():
    c = TiktokenCounter("cl100k_base")
    assert c.count("hello world") == 2
    assert c.count("") == 0
    o = TiktokenCounter("o200k_base")
    assert o.count("연차 휴가는 며칠인가요?") > 0
    # special-token text is counted as plain text, never rejected
    assert c.count("<|endoftext|>") > 1


def test_unknown_tokenizer_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown tokenizer"):
        make_counter("bpe-9000")
    with pytest.raises(ConfigError, match="unknown tiktoken encoding"):
        TiktokenCounter("p50k_base").count("x")
