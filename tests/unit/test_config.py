from pathlib import Path

import pytest

from rag.config import load_config
from rag.errors import ConfigError


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_shipped_configs_validate():
    root = Path(__file__).resolve().parents[2]
    for name in ("default.yaml", "en.yaml", "reader.yaml"):
        cfg = load_config(root / "configs" / name)
        assert cfg.retrieval.fusion.k > 0


def test_negative_k_names_path_and_value(tmp_path):
    p = _write(tmp_path, "retrieval:\n  fusion:\n    k: -3\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert "retrieval.fusion.k: must be > 0, got -3" in str(e.value)
    assert str(p) in str(e.value)


def test_unknown_key_is_rejected_with_path(tmp_path):
    p = _write(tmp_path, "bm25:\n  analyser: english\n")
    with pytest.raises(ConfigError, match=r"bm25\.analyser: unknown key"):
        load_config(p)


def test_bad_literal_and_overlap(tmp_path):
    with pytest.raises(ConfigError, match="bm25.backend"):
        load_config(_write(tmp_path, "bm25:\n  backend: lucene\n"))
    with pytest.raises(ConfigError, match="overlap_tokens"):
        load_config(_write(tmp_path, "chunking:\n  max_tokens: 50\n  overlap_tokens: 50\n"))


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(_write(tmp_path, "a: [1,\n"))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(_write(tmp_path, "- 1\n- 2\n"))


def test_relative_paths_resolve_against_config_folder(tmp_path):
    cfg = load_config(_write(tmp_path, "index:\n  path: sub/idx\n"))
    assert cfg.resolve(cfg.index.path) == tmp_path.resolve() / "sub" / "idx"


def test_hash_is_stable_and_sensitive(tmp_path):
    a = load_config(_write(tmp_path, "retrieval:\n  fusion:\n    k: 30\n"))
    b = load_config(_write(tmp_path, "retrieval:\n  fusion:\n    k: 30\n"))
    assert a.hash == b.hash
    c = a.with_overrides({"retrieval.fusion.k": 31})
    assert c.hash != a.hash
    assert c.retrieval.fusion.k == 31
    # retrieval settings do not change what an index contains
    assert c.index_hash == a.index_hash
    assert a.with_overrides({"bm25.analyzer": "english"}).index_hash != a.index_hash


def test_overrides_are_validated():
    cfg = load_config(None)
    with pytest.raises(ConfigError, match="retrieval.fusion.k"):
        cfg.with_overrides({"retrieval.fusion.k": 0})
    with pytest.raises(ConfigError, match="unknown config section"):
        cfg.with_overrides({"nosuch.thing": 1})


def test_conversation_resolve_takes_yaml_off_and_refuses_llm_without_an_llm():
    from rag.config import RagConfig

    assert RagConfig().with_overrides({"conversation.resolve": False}).conversation.resolve == "off"
    with pytest.raises(ConfigError, match="conversation.resolve: llm needs an LLM"):
        RagConfig().with_overrides({"conversation.resolve": "llm"})
    assert RagConfig().with_overrides({"conversation.resolve": "llm", "generation.backend": "openai",
                                       "generation.model": "m"}).conversation.resolve == "llm"


def test_parse_overrides_reads_values_as_yaml_and_names_the_option_on_a_bad_pair():
    from rag.config import parse_overrides

    assert parse_overrides(["rerank.quantize=false", "retrieval.fusion.k=30", "gate.signal=dense"]) == {
        "rerank.quantize": False, "retrieval.fusion.k": 30, "gate.signal": "dense"}
    assert parse_overrides(None) == {}
    with pytest.raises(ConfigError, match=r"--against expects KEY=VALUE.*'rerank\.quantize'"):
        parse_overrides(["rerank.quantize"], "--against")
